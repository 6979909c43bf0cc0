import { CliError, EXIT, println, str, type Command } from '../command.js';
import { countOption, readTextFile, verifierKeysFor, writeTextFile } from './checkpoint.js';

export const monitorCommand: Command = {
  name: 'monitor',
  summary: "Follow a serving engine's checkpoints, verify each consistency proof, report an equivocation with evidence.",
  help: `Usage: tally monitor --url <http://host:port> --session <hex> --vkey <vkey|file> [--checkpoint <file>] [--rounds <n>] [--interval <ms>] [--evidence <file>] [--json]
       tally monitor --log <url|dir> --log-key <vkey|file> [--sessions <url|dir>] [--checkpoint <file>] [--rounds <n>] [--interval <ms>] [--evidence <file>] [--json]
       tally monitor --log-identity <file>... [--log <url|dir>] [--sessions <url|dir>] [...the same]

Asks a 'tally serve' engine (GET /sessions/<id>/checkpoint and
/sessions/<id>/consistency?from=<n>) for its latest checkpoint of a session,
round after round (a bounded loop), and verifies that each one extends the one
held before: signed by --key, same session, sizes in order, and the RFC 9162
consistency proof links the two roots. Start from a checkpoint you already hold
(one a grader was given, another view of the log) with --checkpoint.

A failing proof — another root at the held size, a proof that does not link —
is an equivocation: both signed checkpoints and the served proof are printed
(and written to --evidence) and the exit code is 1. An unreachable engine is
reported and retried, never taken as evidence.

With --log, follows the ENGINE LOG instead (docs/PROTOCOL.md §15.7) through its
C2SP tlog-tiles read API — a 'tally serve --log-key' prefix (http://host:port/log),
any static host of 'tally tiles export', or that directory: each round the
checkpoint must be signed by --log-key (named as its origin), the entry bundles
must hash to its root, and it must extend the checkpoint held before (a smaller
size or another root is a FORK, exit 1). It lists each new leaf (a session
opened, a session checkpoint signed, a seal), names both leaves when two give one
session checkpoint two roots (EQUIVOCATION, exit 1), and at the end the sessions
opened but not sealed. No token is needed. With --sessions it also reads each
session's own entries — from a 'tally serve' (GET /sessions/<id>/bundle, the
token of $TALLY_TOKEN) or a directory of bundles (<dir>/<id>.jsonl,
<dir>/<id>/bundle.jsonl, or <dir>/bundle.jsonl of that session), or with
tiles:<url|dir> from each session's tlog-tiles entry bundles (a tally serve's
/sessions/<id>/tiles, or <dir>/<id> written by 'tally tiles export <dir>/<id>
--session <id>') — and checks every session checkpoint leaf's root
against that session's tree (a mismatch: TALLY_LOG_SESSION_MISMATCH, exit 1;
a session it cannot read is listed unchecked).

Options:
  --log <url|dir>     the engine log's tiles prefix or exported directory
  --log-key <vkey>    the engine log's verifier key (or a file of keys)
  --log-identity <f>  instead of --log-key: the log's signed identity (tally log
                      identity; repeat it to follow a rotation, the pinned one
                      first): the current shard's log key is the key, and --log
                      defaults to the first tiles URL the identity names
  --sessions <u|d>    with --log: each session's entries (a tally serve URL or a
                      directory of bundles; tiles:<url|dir> for their tiles),
                      to check every checkpoint leaf
  --url <url>         the engine's HTTP base URL
  --session <hex>     the session to follow (64 hex)
  --vkey <vkey|file>  the engine's verifier key (--key: the old spelling, until the next release)
  --checkpoint <f>    a signed checkpoint to start from
  --rounds <n>        rounds to run (default 10)
  --interval <ms>     pause between rounds (default 1000)
  --evidence <file>   write the evidence (JSON) there on equivocation
  --json              one JSON line per round, and the result

The bearer token comes from $TALLY_TOKEN.

Exit codes: 0 consistent for every round, 1 equivocation or a bad checkpoint,
2 usage error, 3 I/O error.`,
  renamedOptions: () => ({ key: 'vkey' }),
  options: { log: { type: 'string' }, sessions: { type: 'string' }, 'log-key': { type: 'string' }, 'log-identity': { type: 'string', multiple: true }, vkey: { type: 'string' }, url: { type: 'string' }, session: { type: 'string' }, key: { type: 'string' }, checkpoint: { type: 'string' }, rounds: { type: 'string' }, interval: { type: 'string' }, evidence: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }, io) {
    if (positionals.length > 0) throw new CliError('monitor takes no arguments');
    const following = values['log'] !== undefined || values['log-identity'] !== undefined;
    if (values['sessions'] !== undefined && !following) throw new CliError('--sessions goes with --log <url|dir>');
    if (following) return (await import('./monitor-log.js')).monitorLog(values, io);
    if (values['log-key'] !== undefined) throw new CliError('--log-key goes with --log <url|dir>');
    const url = str(values, 'url');
    if (url === undefined || !/^https?:\/\/\S+$/.test(url)) throw new CliError('--url <http://host:port> is required');
    const session = str(values, 'session');
    if (session === undefined || !/^[0-9a-f]{64}$/.test(session)) throw new CliError('--session <64 hex> is required');
    const verifiers = await verifierKeysFor(values, io);
    const rounds = countOption(values, 'rounds') ?? 10;
    const intervalMs = countOption(values, 'interval', 0) ?? 1000;
    const cpPath = str(values, 'checkpoint');
    const seed = cpPath === undefined ? undefined : readTextFile(cpPath, io, 'the checkpoint');
    const json = values['json'] === true;
    const token = io.env['TALLY_TOKEN'];
    const base = `${url.replace(/\/+$/, '')}/sessions/${session}`;
    const get = async (path: string) => {
      try {
        const res = await fetch(`${base}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(10_000) });
        const text = await res.text();
        return res.ok ? ({ ok: true, text } as const) : ({ ok: false, message: `HTTP ${res.status}: ${text.slice(0, 200).trim()}` } as const);
      } catch (e) {
        return { ok: false, message: (e as Error).message } as const;
      }
    };
    const { monitorCheckpoints } = await import('../../witness/index.js');
    const r = await monitorCheckpoints({
      source: { checkpoint: () => get('/checkpoint'), consistency: (from) => get(`/consistency?from=${from}`) },
      verifiers,
      rounds,
      intervalMs,
      ...(seed === undefined ? {} : { seed }),
      onRound: (x) => {
        if (json) println(io.stdout, JSON.stringify(x));
        else if (x.kind === 'consistent') println(io.stdout, `round ${x.round}: consistent ${x.from} -> ${x.size} entries, root ${x.root}`);
        else println(io.stderr, `round ${x.round}: unavailable: ${x.message}`);
      },
    });
    if (r.ok) {
      if (json) println(io.stdout, JSON.stringify({ ok: true, rounds: r.rounds, size: r.latest?.size ?? null, root: r.latest?.root ?? null }));
      else println(io.stdout, `ok: ${r.rounds} rounds, no equivocation${r.latest ? ` (latest ${r.latest.size} entries)` : ''}`);
      return EXIT.ok;
    }
    if (r.kind === 'bad-checkpoint') {
      if (json) println(io.stdout, JSON.stringify(r));
      println(io.stderr, `invalid: ${r.message}`);
      return EXIT.invalid;
    }
    const ev = r.evidence;
    const out = str(values, 'evidence');
    if (out !== undefined) writeTextFile(out, `${JSON.stringify(ev, null, 2)}\n`, io, 'the evidence');
    if (json) println(io.stdout, JSON.stringify(r));
    println(io.stderr, `EQUIVOCATION: ${ev.code}: ${ev.message}`);
    if (!json) {
      println(io.stdout, '--- held checkpoint (signed) ---');
      io.stdout.write(ev.older);
      println(io.stdout, '--- served checkpoint (signed) ---');
      io.stdout.write(ev.newer);
      println(io.stdout, '--- served proof ---');
      io.stdout.write(ev.proof);
    }
    return EXIT.invalid;
  },
};
