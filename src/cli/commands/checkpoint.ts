import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { createEngine } from '../../engine.js';
import { TallyError } from '../../protocol/index.js';
import { DEFAULT_ENGINE_NAME, DEFAULT_KEY_PATH, createNotary, loadEngineKey, resolveVerifierKeys, type EngineKey, type Notary, type ParsedVerifierKey } from '../../receipt/index.js';
import type { WitnessedNotary } from '../../witness/index.js';
import { defaultStoreLocation, openStore } from '../../store/index.js';
import { CliError, EXIT, inputFile, invocation, ioProblem, println, str, type Command, type CommandIO } from '../command.js';
import { counted } from '../../demo/format.js';

type Values = Record<string, unknown>;

/** A positive integer option (1 … 2^53 − 1), or undefined when absent; a usage error otherwise. */
export function countOption(values: Values, key: string, min = 1): number | undefined {
  const v = str(values, key);
  if (v === undefined) return undefined;
  if (!/^(0|[1-9][0-9]{0,15})$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) < min) throw new CliError(`--${key} must be an integer >= ${min}`);
  return Number(v);
}

/** The store location of `--db`, else `$TALLY_DB`, else .tally/tally.db (relative paths against the working directory). */
export function storeLocation(values: Values, io: CommandIO): string {
  const loc = str(values, 'db') ?? defaultStoreLocation(io.env);
  if (loc === '') throw new CliError('--db must not be empty');
  if (loc === 'memory:' || /^postgres(ql)?:\/\//i.test(loc)) return loc;
  const path = loc.startsWith('sqlite:') ? loc.slice('sqlite:'.length) : loc;
  return isAbsolute(path) ? path : resolve(io.cwd, path);
}

/** Help lines for the engine-key options of `checkpoint`. */
export const KEY_HELP = `  --key <path>      engine key file (default: $TALLY_KEY, else ${DEFAULT_KEY_PATH}); a
                    PRIVATE+KEY+… line or a PKCS#8 PEM, owner-only permissions
  --name <name>     engine name (default: $TALLY_ENGINE_NAME, else the key file's,
                    else ${DEFAULT_ENGINE_NAME} for a new key)`;

/**
 * The engine key for a command: `--key`/`--name`, else `$TALLY_KEY`/`$TALLY_ENGINE_NAME`.
 * A missing key file is never generated here (`tally key new` creates one, on
 * purpose): it is refused, like every key problem, as an I/O error (exit 3).
 */
export async function engineKeyFor(values: Values, io: CommandIO): Promise<EngineKey> {
  const path = str(values, 'key');
  const name = str(values, 'name');
  try {
    return await loadEngineKey({ ...(path === undefined ? {} : { path }), ...(name === undefined ? {} : { name }), create: false, env: io.env, cwd: io.cwd });
  } catch (e) {
    if (!(e instanceof TallyError)) throw e;
    const flag = path === undefined ? '' : ` --key ${path}`;
    const hint = e.code === 'TALLY_KEY_FILE_NOT_FOUND' ? `: no engine key there, and none is made by surprise (create one on purpose with: ${invocation(io)} key new${flag})` : '';
    throw new CliError(`engine key: ${e.shortMessage}${e.details ? ` (${e.details})` : ''}${hint}`, EXIT.io, e.code);
  }
}

/** The pinned verifier keys of `--<option>` (a key string or a file of keys); a usage error when absent or bad. */
export async function verifierKeysFor(values: Values, io: CommandIO, option = 'vkey'): Promise<ParsedVerifierKey[]> {
  const arg = str(values, option);
  if (arg === undefined) throw new CliError(`--${option} <verifier key|file> is required (the engine's: tally checkpoint --print-key)`);
  try {
    return await resolveVerifierKeys(arg, io.cwd);
  } catch (e) {
    if (!(e instanceof TallyError)) throw e;
    if (e.code === 'TALLY_VERIFIER_KEY_IO' && !existsSync(resolve(io.cwd, arg.trim()))) {
      // Neither a key nor a file: a malformed value (usage), not a missing file (I/O).
      throw new CliError(`--${option}: '${arg}' is neither a verifier key (<name>+<8 hex keyid>+<base64>) nor an existing file of keys`, EXIT.usage, 'TALLY_VERIFIER_KEY_INVALID');
    }
    if (e.code === 'TALLY_VERIFIER_KEY_IO') inputFile(arg.trim(), io, `the --${option} file`);
    throw new CliError(`--${option}: ${e.shortMessage}${e.code === 'TALLY_VERIFIER_KEY_IO' && e.details ? ` (${e.details})` : ''}`, e.code === 'TALLY_VERIFIER_KEY_IO' ? EXIT.io : EXIT.usage, e.code);
  }
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Reads a small text file (a checkpoint, a note, a proof, a grade, a policy)
 * in the one encoding: raw bytes that are well-formed UTF-8 without a byte
 * order mark. An I/O error (exit 3) naming the file when it cannot be read;
 * invalid input (exit 1, `TALLY_CLI_INPUT_ENCODING`) naming the problem for a
 * BOM or invalid UTF-8 — refused, never decoded lossily.
 */
export function readTextFile(path: string, io: CommandIO, what: string): string {
  const p = resolve(io.cwd, path);
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(p);
  } catch (e) {
    throw new CliError(`cannot read ${what} ${p}: ${ioProblem(e as NodeJS.ErrnoException)}`, EXIT.io, 'TALLY_CLI_IO');
  }
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw new CliError(`${what} ${p} starts with a byte order mark (bom): refused, not stripped`, EXIT.invalid, 'TALLY_CLI_INPUT_ENCODING');
  }
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    throw new CliError(`${what} ${p} is not well-formed UTF-8 (invalid-utf8): refused, not replaced`, EXIT.invalid, 'TALLY_CLI_INPUT_ENCODING');
  }
}

/** Writes `text` to `--out` (I/O error naming the file on failure); returns the absolute path. */
export function writeTextFile(path: string, text: string, io: CommandIO, what: string): string {
  const p = resolve(io.cwd, path);
  try {
    writeFileSync(p, text, { encoding: 'utf8', mode: 0o644 });
  } catch (e) {
    throw new CliError(`cannot write ${what} to ${p}: ${ioProblem(e as NodeJS.ErrnoException)}`, EXIT.io, 'TALLY_CLI_IO');
  }
  return p;
}

export const checkpointCommand: Command = {
  name: 'checkpoint',
  summary: "Sign a C2SP checkpoint of a session with the engine key, or print the engine's verifier key.",
  help: `Usage: tally checkpoint [--session <id>] [--size <n>] [--out <file>] [--db <location>] [--key <path>] [--name <name>] [--witness-policy <file>] [--json]
       tally checkpoint --print-key [--key <path>] [--name <name>] [--json]

Signs a C2SP tlog-checkpoint (origin <engine name>/<session id>, tree size,
base64 RFC 6962 root) over the first <n> entries of a session with the engine's
Ed25519 key, as a C2SP signed note. Without --size it covers every entry so
far; after the seal that is the day's receipt. The engine key must exist
('tally key new' creates it; a missing one is refused, exit 3). Every checkpoint is first
recorded in the database's signing log; one that would put a second root at a
signed size (TALLY_SIGN_EQUIVOCATION) or that the stored tree cannot prove
consistent with an earlier signed one (TALLY_SIGN_INCONSISTENT) is refused
and nothing is signed.

--print-key prints the engine's verifier key (name+keyid+base64): give it to
graders, who pin it ('tally verify --vkey', 'tally verify-proof --vkey').

Options:
  --session <id>    the session (64 hex); may be left out when the database holds one
  --size <n>        tree size, 1 to the session's size (default: all entries)
  --out <file>      write the signed checkpoint to <file> instead of stdout
  --print-key       print the engine's verifier key and exit
${KEY_HELP}
  --db <location>   the store: a SQLite file path or postgres://…
                    (default: $TALLY_DB, else .tally/tally.db)
  --json            print the result as JSON
  --witness-policy <file>  submit the signed checkpoint to every witness of the
                    policy (Sigsum format) that has a URL and append the
                    cosignatures they return; stderr says which witnesses
                    cosigned and whether the quorum is met (a down witness
                    only means a missing cosignature)

Exit codes: 0 signed (or key printed), 1 refused (unknown session, size out of
range, the signing log refuses), 2 usage error, 3 I/O error (database, key
file, output file).`,
  options: { session: { type: 'string' }, size: { type: 'string' }, out: { type: 'string' }, 'print-key': { type: 'boolean' }, key: { type: 'string' }, name: { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean' }, 'witness-policy': { type: 'string' } },
  async run({ values, positionals }, io) {
    if (positionals.length > 0) throw new CliError(`checkpoint takes no arguments (got '${positionals[0]}'). Run 'tally checkpoint --help'.`);
    const json = values['json'] === true;
    if (values['print-key'] === true) {
      for (const k of ['session', 'size', 'out', 'db']) if (values[k] !== undefined) throw new CliError(`--print-key takes no --${k}`);
      const key = await engineKeyFor(values, io);
      println(io.stdout, json ? JSON.stringify({ ok: true, name: key.name, verifierKey: key.verifierKey }) : key.verifierKey);
      return EXIT.ok;
    }
    const size = countOption(values, 'size');
    const session = str(values, 'session');
    if (session !== undefined && !/^[0-9a-f]{64}$/.test(session)) throw new CliError('--session must be 64 lowercase hex characters');
    const out = str(values, 'out');
    const location = storeLocation(values, io);
    if (location === 'memory:') throw new CliError('--db memory: holds no session; name a SQLite file or a postgres:// URL');
    if (!/^postgres(ql)?:\/\//i.test(location) && !existsSync(location)) throw new CliError(`no database at ${location}`, EXIT.io, 'TALLY_CLI_IO');
    const key = await engineKeyFor(values, io);
    const store = await openStore(location);
    try {
      let sessionId = session;
      if (sessionId === undefined) {
        const all = await store.listSessions();
        if (all.length !== 1) throw new CliError(all.length === 0 ? `the database ${location} holds no session` : `the database holds ${all.length} sessions; pass --session <id>`);
        sessionId = all[0]!;
      }
      const policyPath = str(values, 'witness-policy');
      let notary: Notary = createNotary({ key });
      let witnessed: WitnessedNotary | undefined;
      if (policyPath !== undefined) {
        const { parseWitnessPolicy, createWitnessedNotary } = await import('../../witness/index.js');
        const parsed = parseWitnessPolicy(readTextFile(policyPath, io, 'the witness policy'));
        if (!parsed.ok) throw new CliError(`--witness-policy ${policyPath}: ${parsed.message}`);
        const witnesses = parsed.policy.witnesses.flatMap((w) => (w.url === undefined ? [] : [{ url: w.url, verifier: w.verifier }]));
        if (witnesses.length === 0) throw new CliError(`--witness-policy ${policyPath}: no witness line has a URL to submit to`);
        notary = witnessed = createWitnessedNotary({ notary, witnesses, policy: parsed.policy });
      }
      const r = await notary.issueCheckpoint(createEngine({ store }), sessionId, size);
      if (!r.ok) {
        if (json) println(io.stdout, JSON.stringify(r));
        println(io.stderr, `tally checkpoint: ${r.code}: ${r.message}`);
        return EXIT.invalid;
      }
      const report = witnessed?.report(r.origin, r.size);
      if (report !== undefined && !json) {
        for (const o of report.outcomes) println(io.stderr, `witness ${o.witness}: ${o.status}${o.message === undefined ? '' : ` (${o.message})`}`);
        println(io.stderr, `witness quorum ${report.quorum === true ? 'met' : 'NOT met'}: cosigned by ${report.cosignedBy.join(', ') || 'no witness'}`);
      }
      const written = out === undefined ? undefined : writeTextFile(out, r.signedCheckpoint, io, 'the checkpoint');
      if (json) println(io.stdout, JSON.stringify({ ...r, verifierKey: key.verifierKey, ...(written === undefined ? {} : { out: written }), ...(report === undefined ? {} : { witnesses: report.outcomes, cosignedBy: report.cosignedBy, quorum: report.quorum }) }));
      else if (written === undefined) io.stdout.write(r.signedCheckpoint);
      else println(io.stdout, `signed checkpoint of ${counted(r.size, 'entry')} of session ${r.sessionId} written to ${written}`);
      return EXIT.ok;
    } finally {
      await store.close();
    }
  },
};
