/**
 * `tally log identity`: writes the engine log's signed identity document
 * (docs/PROTOCOL.md §15.8) — origin, log key, tiles URLs, witness policy,
 * declared rate, validity — signed by the operator's root key and the log
 * key; with `--succeeds`, the identity of a new shard that names the old
 * one and its final checkpoint (a rotation, §15.9).
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { TallyError } from '../../protocol/index.js';
import { CliError, EXIT, emit, str, type Command, type CommandIO } from '../command.js';
import { readTextFile } from './checkpoint.js';

type Values = Record<string, unknown>;

function seconds(values: Values, key: string): number | undefined {
  const v = str(values, key);
  if (v === undefined) return undefined;
  if (!/^(0|[1-9][0-9]{0,15})$/.test(v) || !Number.isSafeInteger(Number(v))) throw new CliError(`--${key} must be POSIX seconds (an integer >= 0)`);
  return Number(v);
}

async function keyOf(load: () => Promise<import('../../receipt/keys/engineKey.js').EngineKey>, what: string) {
  try {
    return await load();
  } catch (e) {
    if (e instanceof TallyError) throw new CliError(`${what}: ${e.shortMessage}${e.details ? ` (${e.details})` : ''}`, EXIT.io, e.code);
    throw e;
  }
}

/** The final checkpoint of the shard `--succeeds` names: `--final`, a log checkpoint signed by that shard's key. */
async function finalOf(values: Values, io: CommandIO, old: import('../../identity/index.js').OpenedLogIdentity): Promise<{ size: number; root: string }> {
  const file = str(values, 'final');
  if (file === undefined) throw new CliError("--succeeds needs --final <file>: the old shard's final log checkpoint (its <prefix>/checkpoint, or tally tiles export's checkpoint file)");
  const [{ openNote }, { parseCheckpoint }, { toHex }] = await Promise.all([import('../../receipt/note/open.js'), import('../../receipt/checkpoint/checkpoint.js'), import('../../protocol/index.js')]);
  const opened = openNote(readTextFile(file, io, 'the final checkpoint'), [old.shards[0]!.logKey]);
  const cp = opened.ok ? parseCheckpoint(opened.text) : undefined;
  if (!opened.ok || !cp?.ok || cp.checkpoint.origin !== old.identity.origin) {
    throw new CliError(`--final ${file} is not a checkpoint of ${old.identity.origin} signed by its log key${opened.ok ? '' : ` (${opened.code})`}`, EXIT.invalid, 'TALLY_LOG_IDENTITY_WRONG_LOG');
  }
  if (cp.checkpoint.size < 1) throw new CliError(`--final ${file} is an empty checkpoint: a shard ends at a size of 1 or more`);
  return { size: cp.checkpoint.size, root: toHex(cp.checkpoint.root) };
}

export const logCommand: Command = {
  name: 'log',
  summary: "Write the engine log's signed identity document graders pin (origin, key, tiles, witness policy, rate, validity), or a new shard's that succeeds it.",
  help: `Usage: tally log identity --out <file> [--root-key <file>] [--log-key <file>] [--tiles <url>]... [--witness-policy <file>] [--rate <n>/<s>] [--not-before <t>] [--not-after <t>] [--succeeds <identity> --final <checkpoint>] [--json]

Writes the engine log's identity (docs/PROTOCOL.md §15.8): a signed note a grader
pins instead of a log key and a witness policy (tally verify --log-identity). It
names the log's origin and verifier key, where its tiles are served, the witness
policy that applies to its checkpoints, the add-checkpoint rate it declares per
witness, and when it is valid; it is signed by the operator's ROOT key (which
outlives shards) and by the log key.

Rotation (§15.9): a new shard is a new store with a new log key (a new origin).
--succeeds names the old shard's identity and --final its final log checkpoint;
the new identity then lists the old shard (and every one before it), so a grader
holding it verifies old days' bindings and new ones, and a grader holding the old
identity follows the chain (--log-identity old --log-identity new).

Options:
  --out <file>           where to write the identity note (required)
  --root-key <file>      the operator's root key (default .tally/root.key; created
                         owner-only when missing, named <engine name>/root)
  --root-name <name>     the root key's name when it is created
  --log-key <file>       the log key, named as the log's origin (default $TALLY_LOG_KEY,
                         else .tally/log.key; created owner-only when missing)
  --log-origin <origin>  the origin when the log key is created (default
                         $TALLY_LOG_ORIGIN, else <engine name>/log)
  --engine-name <name>   the engine name defaults derive from (default
                         $TALLY_ENGINE_NAME, else tally.local)
  --tiles <url>          a tlog-tiles URL prefix the log is served at; repeatable
  --witness-policy <f>   the witness policy graders apply (Sigsum policy format, as
                         --policy reads it; default: quorum none)
  --rate <n>/<s>         declared add-checkpoint budget per witness (default 12/60,
                         tally serve's --log-cosign-budget default)
  --not-before <t>       valid from (POSIX seconds; default now)
  --not-after <t>        valid until (POSIX seconds; default: until succeeded)
  --succeeds <file>      the identity of the shard this one succeeds
  --final <file>         that shard's final log checkpoint (signed by its log key)

Exit codes: 0 written, 1 refused (--succeeds or --final does not verify), 2 usage, 3 I/O.`,
  options: {
    out: { type: 'string' },
    'root-key': { type: 'string' },
    'root-name': { type: 'string' },
    'log-key': { type: 'string' },
    'log-origin': { type: 'string' },
    'engine-name': { type: 'string' },
    tiles: { type: 'string', multiple: true },
    'witness-policy': { type: 'string' },
    rate: { type: 'string' },
    'not-before': { type: 'string' },
    'not-after': { type: 'string' },
    succeeds: { type: 'string' },
    final: { type: 'string' },
  },
  async run({ values, positionals }, io) {
    if (positionals[0] !== 'identity' || positionals.length !== 1) throw new CliError("usage: tally log identity --out <file>. Run 'tally log --help'.");
    const out = str(values, 'out');
    if (out === undefined) throw new CliError('--out <file> is required: where to write the identity');
    const rate = /^([1-9][0-9]{0,8})\/([1-9][0-9]{0,8})$/.exec(str(values, 'rate') ?? '12/60');
    if (rate === null) throw new CliError('--rate must be <requests>/<seconds>, e.g. 12/60');
    const [{ loadLogKey }, { loadEngineKeyFile, loadOrCreateEngineKey }, { DEFAULT_ENGINE_NAME, ENGINE_NAME_ENV_VAR }, identityLib, { parseWitnessPolicy }] = await Promise.all([
      import('../../log/index.js'),
      import('../../receipt/keys/keyFile.js'),
      import('../../receipt/config.js'),
      import('../../identity/index.js'),
      import('../../witness/index.js'),
    ]);
    const engineName = str(values, 'engine-name') ?? (io.env[ENGINE_NAME_ENV_VAR] || DEFAULT_ENGINE_NAME);
    const logPath = str(values, 'log-key');
    const origin = str(values, 'log-origin');
    const log = await keyOf(() => loadLogKey({ env: io.env, cwd: io.cwd, engineName, ...(logPath === undefined ? {} : { path: logPath }), ...(origin === undefined ? {} : { origin }) }), 'log key');
    const rootPath = resolve(io.cwd, str(values, 'root-key') ?? '.tally/root.key');
    const rootName = str(values, 'root-name');
    const root = await keyOf(async () => {
      if (rootName !== undefined) return loadOrCreateEngineKey(rootPath, rootName);
      try {
        return await loadEngineKeyFile(rootPath);
      } catch (e) {
        if (e instanceof TallyError && e.code === 'TALLY_KEY_FILE_NOT_FOUND') return loadOrCreateEngineKey(rootPath, `${engineName}/root`);
        throw e;
      }
    }, 'root key');
    const policyFile = str(values, 'witness-policy');
    const witness_policy = policyFile === undefined ? 'quorum none\n' : readTextFile(policyFile, io, 'the witness policy');
    const policy = parseWitnessPolicy(witness_policy);
    if (!policy.ok) throw new CliError(`--witness-policy ${policyFile}: ${policy.message}`);
    const tilesRaw = values['tiles'];
    const tiles = Array.isArray(tilesRaw) ? tilesRaw.filter((x): x is string => typeof x === 'string') : [];
    for (const t of tiles) if (!/^https?:\/\/\S+$/.test(t)) throw new CliError(`--tiles ${t}: a URL prefix (http:// or https://, no spaces)`);
    let previous: import('../../protocol/index.js').PreviousShard[] = [];
    const succeeds = str(values, 'succeeds');
    if (succeeds !== undefined) {
      // The old identity's own window does not matter here (a shard is often rotated as it ends); its bytes and signatures do.
      const opened = identityLib.readLogIdentity(readTextFile(succeeds, io, 'the identity it succeeds'));
      if (!opened.ok) throw new CliError(`--succeeds ${succeeds}: ${opened.code}: ${opened.message}`, EXIT.invalid, opened.code);
      if (opened.identity.root_key !== root.verifierKey) throw new CliError(`--succeeds ${succeeds} is signed by the root key ${opened.identity.root_key}, not ${root.verifierKey}: a successor is signed by the same root`, EXIT.invalid, 'TALLY_LOG_IDENTITY_CHAIN');
      if (opened.identity.origin === log.name) throw new CliError(`--succeeds ${succeeds} is the identity of this very log (${log.name}): a new shard has a new origin and key`, EXIT.usage);
      previous = [...identityLib.successorPrevious(opened, await finalOf(values, io, opened))];
    } else if (str(values, 'final') !== undefined) throw new CliError('--final needs --succeeds <identity>');
    const notBefore = seconds(values, 'not-before') ?? Math.floor(Date.now() / 1000);
    const notAfter = seconds(values, 'not-after');
    let note: string;
    try {
      note = identityLib.signLogIdentity(
        { origin: log.name, tiles, witness_policy, rate: { requests: Number(rate[1]), window_seconds: Number(rate[2]) }, not_before: notBefore, ...(notAfter === undefined ? {} : { not_after: notAfter }), previous },
        { root, log },
      );
    } catch (e) {
      if (e instanceof TallyError) throw new CliError(e.message, EXIT.usage, e.code);
      throw e;
    }
    const path = resolve(io.cwd, out);
    try {
      writeFileSync(path, note);
    } catch (e) {
      throw new CliError(`cannot write ${path}: ${(e as Error).message}`, EXIT.io, 'TALLY_CLI_IO');
    }
    return emit(io, values, { ok: true, file: path, origin: log.name, logKey: log.verifierKey, rootKey: root.verifierKey, previous: previous.map((p) => ({ origin: p.origin, size: p.size, root: p.root })) }, () => [
      `log identity of ${log.name} written to ${path}`,
      `log key:  ${log.verifierKey}`,
      `root key: ${root.verifierKey}`,
      ...previous.map((p) => `succeeds ${p.origin} (final size ${p.size}, root ${p.root})`),
    ]);
  },
};
