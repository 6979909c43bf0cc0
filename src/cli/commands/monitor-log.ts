/**
 * `tally monitor --log <url|dir> --log-key <vkey>`: follows the engine log
 * through its tlog-tiles read API (a `tally serve --log-key` prefix, any
 * static host of `tally tiles export`, or that directory itself), checks each
 * checkpoint extends the last, lists the sessions opened and sealed, and
 * exits 1 on a fork or an equivocation (docs/PROTOCOL.md §15.7); with
 * `--sessions <url|dir>`, also checks each session checkpoint leaf against
 * the session's own entries (§15.10).
 */
import { CliError, EXIT, println, str, type CommandIO } from '../command.js';
import type { ParsedVerifierKey } from '../../receipt/note/types.js';
import { countOption, readTextFile, verifierKeysFor, writeTextFile } from './checkpoint.js';

type Values = Record<string, unknown>;

/** Runs the log monitor; returns the exit code. */
export async function monitorLog(values: Values, io: CommandIO): Promise<number> {
  for (const o of ['url', 'session', 'key']) if (values[o] !== undefined) throw new CliError(`--${o} follows one session; --log follows the engine log (give one or the other)`);
  const { where, logVerifiers } = await whatToFollow(values, io);
  const rounds = countOption(values, 'rounds') ?? 10;
  const intervalMs = countOption(values, 'interval', 0) ?? 1000;
  const cpPath = str(values, 'checkpoint');
  const seed = cpPath === undefined ? undefined : readTextFile(cpPath, io, 'the checkpoint');
  const json = values['json'] === true;
  const [{ monitorEngineLog }, { logSource }, { sessionEntriesSource }] = await Promise.all([import('../../log/monitor.js'), import('../../log/source.js'), import('./monitor-sessions.js')]);
  const sessionsAt = str(values, 'sessions');
  if (sessionsAt === '') throw new CliError('--sessions <url|dir> must not be empty');
  const r = await monitorEngineLog({
    source: logSource(where, io.cwd),
    ...(sessionsAt === undefined ? {} : { sessions: sessionEntriesSource(sessionsAt, io) }),
    logVerifiers,
    rounds,
    intervalMs,
    ...(seed === undefined ? {} : { seed }),
    onRound: (x) => {
      if (json) return println(io.stdout, JSON.stringify(x));
      if (x.kind === 'unavailable') return println(io.stderr, `round ${x.round}: unavailable: ${x.message}`);
      println(io.stdout, `round ${x.round}: consistent ${x.from} -> ${x.size} leaves, root ${x.root}${x.checked === undefined ? '' : `; ${x.checked} checkpoints checked against their sessions`}`);
      for (const e of x.events) {
        const l = e.leaf;
        println(io.stdout, l.kind === 'open' ? `  leaf ${e.index}: opened  ${l.session}` : `  leaf ${e.index}: ${l.seal ? 'sealed ' : 'signed '} ${l.origin} (${l.size} entries, root ${l.root})`);
      }
    },
  });
  if (r.ok) {
    if (json) println(io.stdout, JSON.stringify({ ok: true, rounds: r.rounds, size: r.latest?.size ?? null, root: r.latest?.root ?? null, opened: r.opened.length, unsealed: r.unsealed, ...(r.sessions ? { sessions: r.sessions } : {}) }));
    else {
      println(io.stdout, `ok: ${r.rounds} rounds, no fork${r.latest ? ` (latest ${r.latest.size} leaves)` : ''}; ${r.opened.length} sessions opened, ${r.unsealed.length} not sealed`);
      for (const s of r.unsealed) println(io.stdout, `  not sealed: ${s}`);
      if (r.sessions) {
        println(io.stdout, `sessions: ${r.sessions.checked} checkpoints match their session's own tree, ${r.sessions.unchecked.length} unchecked`);
        for (const u of r.sessions.unchecked) println(io.stdout, `  unchecked: leaf ${u.index}: ${u.message}`);
      }
    }
    return EXIT.ok;
  }
  const out = str(values, 'evidence');
  if (out !== undefined && r.kind !== 'bad-log') writeTextFile(out, `${JSON.stringify(r, null, 2)}\n`, io, 'the evidence');
  if (json) println(io.stdout, JSON.stringify(r));
  if (r.kind === 'bad-log') println(io.stderr, `invalid: ${r.message}`);
  else if (r.kind === 'fork') {
    println(io.stderr, `FORK: ${r.code}: ${r.message}`);
    if (!json) {
      println(io.stdout, '--- held checkpoint (signed) ---');
      io.stdout.write(r.held);
      println(io.stdout, '--- served checkpoint (signed) ---');
      io.stdout.write(r.served);
    }
  } else if (r.kind === 'equivocation') {
    println(io.stderr, `${r.code === 'TALLY_LOG_EQUIVOCATION' ? 'EQUIVOCATION' : 'INCONSISTENT'}: ${r.message} (${r.code})`);
    if (!json) for (const e of r.leaves) println(io.stdout, `leaf ${e.index}: ${JSON.stringify(e.leaf)}`);
  } else {
    println(io.stderr, `SESSION MISMATCH: ${r.message} (${r.code})`);
    if (!json) println(io.stdout, `leaf ${r.leaf.index}: ${JSON.stringify(r.leaf.leaf)}`);
  }
  return EXIT.invalid;
}

/**
 * The log followed and its key: `--log` with `--log-key`, or `--log-identity`
 * (the pinned identity, then its successors): the current shard's log key,
 * and `--log` by default the identity's first tiles URL (§15.8).
 */
async function whatToFollow(values: Values, io: CommandIO): Promise<{ readonly where: string; readonly logVerifiers: readonly ParsedVerifierKey[] }> {
  const raw = values['log-identity'];
  const files = Array.isArray(raw) ? raw.filter((x): x is string => typeof x === 'string') : [];
  const given = str(values, 'log');
  if (given === '') throw new CliError('--log <url|dir> must not be empty');
  if (files.length === 0) {
    if (values['log-key'] === undefined) throw new CliError("--log needs --log-key <vkey> or --log-identity <file>: the log's verifier key, named as its origin");
    return { where: given!, logVerifiers: await verifierKeysFor(values, io, 'log-key') };
  }
  if (values['log-key'] !== undefined) throw new CliError('give either --log-identity or --log-key, not both: the identity names the log key');
  const { openLogIdentityChain } = await import('../../identity/index.js');
  const id = openLogIdentityChain(files.map((f) => readTextFile(f, io, 'the log identity')));
  if (!id.ok) throw new CliError(`the log identity ${files.join(', ')}: ${id.code}: ${id.message}`, EXIT.invalid, id.code);
  const where = given ?? id.identity.tiles[0];
  if (where === undefined) throw new CliError(`the log identity of ${id.identity.origin} names no tiles URL: pass --log <url|dir>`);
  return { where, logVerifiers: [id.shards[0]!.logKey] };
}
