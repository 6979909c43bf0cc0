import { verifyBundleFile } from '../../codec/index.js';
import { isDigestHex, type ChainPin } from '../../protocol/index.js';
import { closeSync, openSync, readSync } from 'node:fs';
import { CliError, EXIT, inputFile, invocation, println, str, type Command, type CommandIO } from '../command.js';
import { progressReporter } from '../progress.js';
import { counted } from '../../demo/format.js';
import { verdictLine } from '../pins.js';
import { LOG_BINDING_HELP, LOG_BINDING_OPTIONS, LOG_READ_HELP } from './log-binding.js';
import { WITNESS_POLICY_HELP, WITNESS_POLICY_OPTIONS } from './witness-policy.js';

export const verifyCommand: Command = {
  name: 'verify',
  summary: 'Verify a sealed bundle offline (every hash, link, frame root, the Merkle root and the seal).',
  help: `Usage: tally verify <bundle.jsonl> [--vkey <vkey> --checkpoint <file>] [--root <hex>] [--session <hex>] [--size <n>] [--unsealed] [--parallel] [--witness <vkey>... [--quorum k] | --policy <file>] [--log-key <vkey> | --log-identity <file>... [--log-proof <file>] [--log <url|dir>]] [--json]

Recomputes every entry hash, parent link, ordinal, frame root, authored hash,
the RFC 6962 root and the finalize seal, streaming (memory stays bounded).
Reports the first bad entry by its 0-based index with a typed reason.

Options:
  --root <hex>      pin the receipt root (64 hex); a different root fails
  --session <hex>   pin the session id
  --size <n>        pin the number of entries
  --unsealed        accept a bundle without a finalize seal (in-progress export)
  --parallel        spread the work over child processes, one per free core
                    (same result; faster on long days when cores are free)
  --vkey <vkey>     the engine's verifier key (name+keyid+base64, or a file of keys);
                    --key is its old spelling, accepted until the next release
  --checkpoint <f>  a signed checkpoint of the day (the sealed receipt, or an earlier
                    one): it must carry a valid signature by --vkey, name the bundle's
                    session, and its root must be the root of the bundle's first
                    <size> entries (for the receipt: all of them)
  --json            print the result as JSON
${WITNESS_POLICY_HELP}
                    (with --checkpoint: it must carry the witness quorum; the
                    cosignatures are checked before the bundle is read)
${LOG_BINDING_HELP}
${LOG_READ_HELP}

Exit codes: 0 valid, 1 invalid, 2 usage error, 3 file unreadable.`,
  renamedOptions: () => ({ key: 'vkey' }),
  options: {
    vkey: { type: 'string' },
    root: { type: 'string' },
    session: { type: 'string' },
    size: { type: 'string' },
    unsealed: { type: 'boolean' },
    parallel: { type: 'boolean' },
    json: { type: 'boolean' },
    key: { type: 'string' },
    checkpoint: { type: 'string' },
    ...WITNESS_POLICY_OPTIONS,
    ...LOG_BINDING_OPTIONS,
    log: { type: 'string' },
  },
  async run({ values, positionals }, io) {
    const path = positionals[0];
    if (!path || positionals.length > 1) throw new CliError("verify takes exactly one bundle path. Run 'tally verify --help'.");
    inputFile(path, io, 'the bundle');
    const pin: { sessionId?: string; receiptRoot?: string; size?: number } = {};
    const root = str(values, 'root');
    if (root !== undefined) {
      if (!isDigestHex(root)) throw new CliError('--root must be 64 lowercase hex characters');
      pin.receiptRoot = root;
    }
    const session = str(values, 'session');
    if (session !== undefined) {
      if (!isDigestHex(session)) throw new CliError('--session must be 64 lowercase hex characters');
      pin.sessionId = session;
    }
    const size = str(values, 'size');
    if (size !== undefined) {
      if (!/^[1-9][0-9]{0,15}$/.test(size)) throw new CliError('--size must be a positive integer');
      pin.size = Number(size);
    }
    const json = values['json'] === true;
    if (values['vkey'] !== undefined || values['checkpoint'] !== undefined || values['witness'] !== undefined || values['policy'] !== undefined || values['quorum'] !== undefined || values['log-key'] !== undefined || values['log-identity'] !== undefined || values['log-proof'] !== undefined || values['log'] !== undefined) {
      // Loaded only here: the receipt layer (signed notes, keys) is not needed for a plain verify.
      const { verifyWithCheckpoint } = await import('./verify-proof.js');
      return verifyWithCheckpoint(path, pin as ChainPin, values, io);
    }
    const progress = progressReporter(io, 'verifying');
    const result =
      values['parallel'] === true
        ? await verifyBundleFile(path, { requireSealed: values['unsealed'] !== true, pin: pin as ChainPin, parallel: { onProgress: (n) => progress.tick(n, pin.size) } })
        : await verifyBundleFile(path, { requireSealed: values['unsealed'] !== true, pin: pin as ChainPin, onProgress: (n) => progress.tick(n, pin.size) });
    progress.done();
    if (json) {
      println(io.stdout, JSON.stringify(result));
    } else if (result.ok) {
      println(io.stdout, verdictLine(pin));
      println(io.stdout, `entries      ${result.size} (${counted(result.frames, 'frame')}, ${counted(result.turns, 'turn')})${result.sealed ? ', sealed' : ', NOT sealed'}`);
      println(io.stdout, `session      ${result.sessionId}`);
      println(io.stdout, `receipt root ${result.receiptRoot}`);
      println(io.stdout, `head         ${result.head}`);
    } else {
      println(io.stderr, `invalid: entry ${result.index}: ${result.code}: ${result.message}`);
      if (result.index === 0) {
        const hint = notABundle(path, io);
        if (hint !== undefined) println(io.stderr, hint);
      }
    }
    return result.ok ? EXIT.ok : EXIT.invalid;
  },
};

/**
 * When a file that is not a bundle is one of Tally's other files, says which
 * and how to use it: a signed note (a checkpoint: --checkpoint) or a
 * single-turn receipt (tally verify-proof). Read from its first 64 KiB.
 */
function notABundle(path: string, io: CommandIO): string | undefined {
  let head: string;
  try {
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(65536);
      head = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const t = invocation(io);
  if (head.startsWith('c2sp.org/tlog-proof@v1\n')) return `this is a single-turn receipt (a tlog-proof), not a bundle: ${t} verify-proof ${path} --vkey <vkey>`;
  // A signed note: text lines, a blank line, then signature lines "— <name> <base64>".
  if (/^[^\n{]+\n[0-9]+\n[A-Za-z0-9+/=]+\n(?:[^\n]*\n)*?\n\u2014 \S+ \S+/.test(head)) return `this is a signed note (a checkpoint), not a bundle: use it as --checkpoint with the bundle: ${t} verify <bundle.jsonl> --vkey <vkey> --checkpoint ${path}`;
  return undefined;
}
