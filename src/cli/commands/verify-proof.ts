import { resolve } from 'node:path';
import { isDigestHex, isoTime, type ChainPin } from '../../protocol/index.js';
import { bundleFileChunks, formatKeyId, openSessionCheckpoint, verifyBundleCheckpoint, verifyTurnReceipt, type ParsedVerifierKey, type ReceiptPin } from '../../receipt/index.js';
import type { WitnessPolicy } from '../../witness/index.js';
import { CliError, EXIT, println, str, type Command, type CommandIO } from '../command.js';
import { progressReporter } from '../progress.js';
import { countOption, readTextFile, verifierKeysFor } from './checkpoint.js';
import { counted } from '../../demo/format.js';
import { verdictLine } from '../pins.js';
import { LOG_BINDING_HELP, LOG_BINDING_OPTIONS, checkLogBinding, checkLogRead, logBoundJson, logBoundLine, wantsLogBinding, type LogBound } from './log-binding.js';
import { WITNESS_POLICY_HELP, WITNESS_POLICY_OPTIONS, printWitnessFailure, witnessPolicyFor } from './witness-policy.js';

export const verifyProofCommand: Command = {
  name: 'verify-proof',
  summary: "Verify a single-turn receipt offline with the engine's verifier key alone.",
  help: `Usage: tally verify-proof <receipt.tlog-proof> --vkey <vkey|file> [--checkpoint <file>] [--session <hex>] [--size <n>] [--root <hex>] [--witness <vkey>... [--quorum k] | --policy <file>] [--log-key <vkey> | --log-identity <file>... [--log-proof <file>]] [--json]

Checks one entry of a day from its receipt file and the engine's verifier key,
with no bundle and no database: the file is a C2SP tlog-proof; its checkpoint
must carry a valid signature by the pinned key and name that key's engine and
a session; the entry bytes (the "extra" line) must be a well-formed canonical
entry of that session; and SHA-256(0x00 || entry bytes) must be included at
the stated index in the checkpoint's RFC 6962 tree. Signatures by keys you did
not pin (witnesses) are ignored.

Pin the checkpoint to the sealed receipt you were given with --checkpoint
(or --session/--size/--root): a receipt against any other tree then fails.

Options:
  --vkey <vkey|file>   (--key: the old spelling, until the next release)
                       the engine's verifier key (name+keyid+base64), or a file
                       of verifier keys, one per line
  --checkpoint <file>  the sealed checkpoint to pin (opened with --vkey)
  --session <hex>      pin the session id
  --size <n>           pin the checkpoint's tree size
  --root <hex>         pin the checkpoint's root (hex)
  --json               print the result as JSON
${WITNESS_POLICY_HELP}
${LOG_BINDING_HELP}

With a witness policy, the receipt's checkpoint (and a --checkpoint pinned one)
must also carry valid cosignatures meeting the quorum; otherwise it is invalid
and the message names the witnesses that cosigned and those that did not.

Exit codes: 0 valid, 1 invalid (the failing stage and code are printed), 2 usage
error, 3 I/O error.`,
  renamedOptions: () => ({ key: 'vkey' }),
  options: { vkey: { type: 'string' }, key: { type: 'string' }, checkpoint: { type: 'string' }, session: { type: 'string' }, size: { type: 'string' }, root: { type: 'string' }, json: { type: 'boolean' }, ...WITNESS_POLICY_OPTIONS, ...LOG_BINDING_OPTIONS },
  async run({ values, positionals }, io) {
    const path = positionals[0];
    if (!path || positionals.length > 1) throw new CliError("verify-proof takes exactly one receipt file. Run 'tally verify-proof --help'.");
    const verifiers = await verifierKeysFor(values, io);
    const asked = await witnessPolicyFor(values, io);
    // With --log-key the witness policy is the log checkpoint's (what witnesses cosign is the engine log).
    const bound = wantsLogBinding(values);
    const policy = bound ? undefined : asked;
    const pin: { sessionId?: string; size?: number; receiptRoot?: string } = {};
    const session = str(values, 'session');
    if (session !== undefined) {
      if (!isDigestHex(session)) throw new CliError('--session must be 64 lowercase hex characters');
      pin.sessionId = session;
    }
    const size = countOption(values, 'size');
    if (size !== undefined) pin.size = size;
    const root = str(values, 'root');
    if (root !== undefined) {
      if (!isDigestHex(root)) throw new CliError('--root must be 64 lowercase hex characters');
      pin.receiptRoot = root;
    }
    const json = values['json'] === true;
    const cpPath = str(values, 'checkpoint');
    if (cpPath !== undefined) {
      const cp = openSessionCheckpoint(readTextFile(cpPath, io, 'the checkpoint'), verifiers);
      if (!cp.ok) {
        if (json) println(io.stdout, JSON.stringify({ ...cp, stage: `pinned-checkpoint-${cp.stage}` }));
        println(io.stderr, `invalid: the pinned checkpoint ${cpPath}: ${cp.stage}: ${cp.code}: ${cp.message}`);
        return EXIT.invalid;
      }
      Object.assign(pin, { sessionId: cp.checkpoint.sessionId, size: cp.checkpoint.size, receiptRoot: cp.checkpoint.root } satisfies ReceiptPin);
      if (policy !== undefined) {
        const { checkWitnessPolicy } = await import('../../witness/index.js');
        const w = checkWitnessPolicy(cp.checkpoint.signedCheckpoint, verifiers, policy);
        if (!w.ok) {
          if (json) println(io.stdout, JSON.stringify({ ...w, stage: 'pinned-checkpoint-witnesses' }));
          printWitnessFailure(io, `the pinned checkpoint ${cpPath}`, w);
          return EXIT.invalid;
        }
      }
    }
    const text = readTextFile(path, io, 'the receipt');
    const opts = { verifiers, ...(Object.keys(pin).length === 0 ? {} : { pin }) };
    const r = policy === undefined ? verifyTurnReceipt(text, opts) : (await import('../../witness/index.js')).verifyWitnessedTurnReceipt(text, { ...opts, policy });
    if (!r.ok) {
      if (json) println(io.stdout, JSON.stringify(r));
      println(io.stderr, `invalid: ${r.stage}: ${r.code}: ${r.message}`);
      return EXIT.invalid;
    }
    if (!('entry' in r)) return EXIT.internal;
    const e = r.entry;
    const cp = r.checkpoint;
    let log: LogBound | undefined;
    if (bound) {
      // A checkpoint that holds the finalize entry is the seal; of any other the receipt alone does not tell.
      const b = await checkLogBinding(values, io, { origin: cp.origin, size: cp.size, root: cp.root }, { ...(e.kind === 'finalize' ? { seal: true } : {}), policy: asked, beside: cpPath });
      if (typeof b === 'number') return b;
      log = b;
    }
    if (json) {
      println(io.stdout, JSON.stringify({ ok: true, index: r.index, sessionId: r.sessionId, entryHash: r.entryHash, entry: e, checkpoint: { origin: cp.origin, size: cp.size, root: cp.root, signedBy: cp.signedBy.map((s) => `${s.name}+${formatKeyId(s.keyId)}`) }, ...(log === undefined ? {} : { logBinding: logBoundJson(log) }) }));
      return EXIT.ok;
    }
    const what =
      e.kind === 'turn'
        ? `turn ${e.ordinal} (${e.body.kind === 'authored' ? `authored, ${Buffer.from(e.body.bytes, 'base64').length} bytes` : `stand-down: ${e.body.failureClass}`})`
        : e.kind === 'frame'
          ? `frame ${e.ordinal} (time ${isoTime(e.time)})`
          : e.kind === 'finalize'
            ? `seal over ${e.size} entries`
            : `genesis of "${e.spec.name}"`;
    println(io.stdout, `valid: entry ${r.index} of session ${r.sessionId}${cpPath !== undefined ? ' (pinned checkpoint)' : Object.keys(pin).length > 0 ? ` (${verdictLine(pin).replace('valid, ', '')})` : ' (unpinned: in some tree the key signed; pin the sealed one with --checkpoint)'}`);
    println(io.stdout, `entry        ${what}`);
    if (e.kind === 'turn' && e.ruling !== undefined) {
      // The ruling summed up as inspect shows it (the whole ruling is in --json).
      const [{ rowOf }, { turnVerdict }] = await Promise.all([import('../../demo/timeline.js'), import('../../demo/format.js')]);
      const row = rowOf(r.index, r.entryHash, e, 0);
      if (row.kind === 'turn') {
        const what = [row.agent, row.action, row.side, row.size, row.market].filter((x) => x !== undefined).join(' ');
        println(io.stdout, `ruling       ${what === '' ? '' : `${what}: `}${turnVerdict(row)} (the whole ruling: --json)`);
      }
    }
    println(io.stdout, `entry hash   ${r.entryHash}`);
    println(io.stdout, `checkpoint   ${counted(cp.size, 'entry')}, root ${cp.root}`);
    println(io.stdout, `signed by    ${cp.signedBy.map((s) => `${s.name}+${formatKeyId(s.keyId)}`).join(', ')}`);
    if (policy !== undefined) println(io.stdout, `cosigned by  ${await cosignerNames(cp.signedCheckpoint, verifiers, policy)} (witness quorum met)`);
    if (log !== undefined) println(io.stdout, logBoundLine(log));
    return EXIT.ok;
  },
};

/** The names of the policy's witnesses that cosigned `signedCheckpoint` (already checked to meet the quorum). */
async function cosignerNames(signedCheckpoint: string, verifiers: readonly ParsedVerifierKey[], policy: WitnessPolicy): Promise<string> {
  const { checkWitnessPolicy } = await import('../../witness/index.js');
  const w = checkWitnessPolicy(signedCheckpoint, verifiers, policy);
  return w.ok ? (w.signed.length === 0 ? '(none required)' : w.signed.join(', ')) : '?';
}

/** A bundle checked against a signed checkpoint: the result and the phrase saying what it was pinned to. */
export interface CheckpointPinned {
  readonly result: Extract<Awaited<ReturnType<typeof verifyBundleCheckpoint>>, { ok: true; summary: unknown }>;
  /** `the checkpoint <file> (<n> entries) signed by <signers>`, for {@link verdictLine}. */
  readonly pinnedTo: string;
  readonly signedCheckpoint: string;
  readonly verifiers: readonly ParsedVerifierKey[];
  /** The witness policy the session checkpoint was held to (none when it applied to the log checkpoint). */
  readonly policy: WitnessPolicy | undefined;
  /** The log binding, with --log-key. */
  readonly log: LogBound | undefined;
}

/**
 * The one check of a bundle against `--vkey <vkey> --checkpoint <file>` (and a
 * witness policy), shared by `tally verify` and `tally replay`: see
 * `verifyBundleCheckpoint`. A failure is printed and returned as an exit code.
 */
export async function checkAgainstCheckpoint(path: string, pin: ChainPin, values: Record<string, unknown>, io: CommandIO): Promise<number | CheckpointPinned> {
  const cpPath = str(values, 'checkpoint');
  if (cpPath === undefined) throw new CliError('--vkey needs --checkpoint <file>: the key verifies the signed checkpoint, which pins the day');
  if (values['vkey'] === undefined) throw new CliError("--checkpoint needs --vkey <vkey>: a checkpoint is only as good as the key that signed it (tally checkpoint --print-key)");
  const verifiers = await verifierKeysFor(values, io);
  const asked = await witnessPolicyFor(values, io);
  // With --log-key the witness policy is the log checkpoint's (what witnesses cosign is the engine log).
  const bound = wantsLogBinding(values);
  const policy = bound ? undefined : asked;
  const signedCheckpoint = readTextFile(cpPath, io, 'the checkpoint');
  const json = values['json'] === true;
  const progress = json ? { done: () => {} } : progressReporter(io, 'verifying');
  const opts = { signedCheckpoint, verifiers, requireSealed: values['unsealed'] !== true, pin };
  const chunks = bundleFileChunks(resolve(io.cwd, path));
  const r = policy === undefined ? await verifyBundleCheckpoint(chunks, opts) : await (await import('../../witness/index.js')).verifyWitnessedBundleCheckpoint(chunks, { ...opts, policy });
  progress.done();
  if (!r.ok) {
    if (json) println(io.stdout, JSON.stringify(r));
    else if (r.stage === 'chain') println(io.stderr, `invalid: entry ${r.index}: ${r.code}: ${r.message}`);
    else println(io.stderr, `invalid: checkpoint ${cpPath}: ${r.stage}: ${r.code}: ${r.message}`);
    return EXIT.invalid;
  }
  if (!('summary' in r)) return EXIT.internal;
  const cp = r.checkpoint;
  let log: LogBound | undefined;
  if (bound) {
    const b = await checkLogBinding(values, io, { origin: cp.origin, size: cp.size, root: cp.root }, { seal: r.coversAll && r.summary.sealed, policy: asked, beside: cpPath });
    if (typeof b === 'number') return b;
    log = b;
  }
  const signers = cp.signedBy.map((x) => `${x.name}+${formatKeyId(x.keyId)}`).join(', ');
  return { result: r, pinnedTo: `the checkpoint ${cpPath} (${counted(cp.size, 'entry')}) signed by ${signers}`, signedCheckpoint, verifiers, policy, log };
}

/**
 * `tally verify <bundle> --vkey <vkey> --checkpoint <file>`: the bundle against
 * a signed checkpoint (see {@link checkAgainstCheckpoint}). Returns the exit code.
 */
export async function verifyWithCheckpoint(path: string, pin: ChainPin, values: Record<string, unknown>, io: CommandIO): Promise<number> {
  if (values['log'] !== undefined && values['log-key'] === undefined && values['log-identity'] === undefined) throw new CliError("--log needs --log-key <vkey> or --log-identity <file>: the log is read to check the day's binding into it");
  const c = await checkAgainstCheckpoint(path, pin, values, io);
  if (typeof c === 'number') return c;
  const read = c.log === undefined || values['log'] === undefined ? undefined : await checkLogRead(values, io, c.log, path);
  if (typeof read === 'number') return read;
  const r = c.result;
  const cp = r.checkpoint;
  if (values['json'] === true) {
    println(io.stdout, JSON.stringify({ ...r.summary, checkpoint: { origin: cp.origin, size: cp.size, root: cp.root, signedBy: cp.signedBy.map((s) => `${s.name}+${formatKeyId(s.keyId)}`), coversAll: r.coversAll }, ...(c.log === undefined ? {} : { logBinding: logBoundJson(c.log) }), ...(read === undefined ? {} : { logRead: read }) }));
    return EXIT.ok;
  }
  const s = r.summary;
  println(io.stdout, verdictLine(pin, c.pinnedTo));
  println(io.stdout, `entries      ${s.size} (${counted(s.frames, 'frame')}, ${counted(s.turns, 'turn')})${s.sealed ? ', sealed' : ', NOT sealed'}`);
  println(io.stdout, `session      ${s.sessionId}`);
  println(io.stdout, `receipt root ${s.receiptRoot}`);
  println(io.stdout, `head         ${s.head}`);
  println(io.stdout, `checkpoint   ${counted(cp.size, 'entry')}${r.coversAll ? ' (the whole bundle)' : ` (the first ${cp.size}: an earlier state of this day)`}, signed by ${cp.signedBy.map((x) => `${x.name}+${formatKeyId(x.keyId)}`).join(', ')}`);
  if (c.policy !== undefined) println(io.stdout, `cosigned by  ${await cosignerNames(c.signedCheckpoint, c.verifiers, c.policy)} (witness quorum met)`);
  if (c.log !== undefined) println(io.stdout, logBoundLine(c.log));
  if (read !== undefined) println(io.stdout, `engine log   read ${read.leaves} leaves: consistent with the binding; ${read.sameOrigin.length} other checkpoint leaves of this day, each on the day's tree, none equivocating`);
  return EXIT.ok;
}
