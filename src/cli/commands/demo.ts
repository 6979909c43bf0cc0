import { resolve, relative, isAbsolute } from 'node:path';
import type { DemoPhase } from '../../demo/run.js';
import { MAX_DEMO_WAKES } from '../../demo/limits.js';
import { MAX_SEED } from '../../demo/prng.js';
import { CliError, EXIT, invocation, println, str, type Command, type CommandIO } from '../command.js';
import { progressReporter, type Progress } from '../progress.js';
import { intOption } from './session-io.js';

export const demoCommand: Command = {
  name: 'demo',
  summary: 'Record, seal, verify, replay and prove a whole simulated agent-day (what `npm start` runs).',
  help: `Usage: tally demo [--seed <n>] [--wakes <n>] [--out <dir>] [--db <location>] [--sync full|normal] [--json]
       tally demo --x402 [--out <dir>] [--json]
       tally demo --ap2 [--out <dir>] [--json]

Runs a deterministic agent-day on the embedded SQLite store: a seeded market
simulator delivers the OPEN frame and the wakes (prices, fills, ticket
settlements); two scripted agents answer with signed intents (open, modify,
close, transfer) under a mandate whose rules a panel of three local judges
rules on (each with its own key and a 250 ms timeout; two must allow), and also
do what real agents and attackers do (a replayed nonce, an expired ttl, bad
sizes and slippage, a target on a close, an unknown signer, a tampered
signature, mandate breaches, an order larger than the quota, a prompt
injection all judges deny, a panel split 2 of 3 and 1 of 3, a judge that times
out, one that answers in prose, one whose answer another key signed, a second
proposal within the hour over the judge rate, an order that never fills, a fill
reported twice, network retries, a second answer into a filled slot,
stand-downs of every class). A day of 8 wakes or more closes with the desk's
transaction budget spent (one more proposal meets the cap) and the principal
terminating the mandate (the last proposal is refused). Then it seals the day, exports
the bundle and the signed receipt, verifies both, replays every ruling from the
bundle alone, writes a single-turn receipt and prints a summary with the time
each phase took. The keys are public test keys (Anvil accounts, RFC 8032).

The same seed and wakes always give the same receipt root. Running again into
the same database reuses the sealed day (nothing is written twice; the files
are exported and checked again); an interrupted run is resumed. The judge rate
counts across every session of the store: record another day of the same seed
(other --wakes) into another --out, or it shares this day's hours.

With --ap2 it records instead a day under an AP2 v0.2 open payment mandate
(docs/PROTOCOL.md §16): the user's SD-JWT mandate (budget 100 USD, one
merchant) is the session's authority, five purchases are the agent's closed
payment mandates; those within the budget are admitted, the one that would
exceed it is refused. Then it seals, verifies, replays, and retrieves the
evidence of one transaction by its transaction_id and verifies it offline
(default --out ./tally-demo-ap2: tally.db, bundle.jsonl, receipt.note,
engine.vkey, evidence.json, evidence.tlog-proof, summary.json). Its keys are
public test keys too (SHA-256 of a label, see src/demo/ap2-credentials.ts).

Options:
  --ap2             the AP2 day (takes only --out and --json)
  --seed <n>        PRNG seed, 0 to ${MAX_SEED} (default 1)
  --wakes <n>       wakes after the OPEN frame, 0 to ${MAX_DEMO_WAKES} (default 48: one day of 30-minute wakes)
  --out <dir>       output directory (default ./tally-demo): tally.db, bundle.jsonl,
                    receipt.json, receipt.note, engine.vkey, proof.tlog-proof, summary.json,
                    and the engine log: its C2SP tlog-tiles under log/, log.vkey, and the
                    seal's inclusion in the log's checkpoint, log-proof.tlog-proof
  --db <location>   store instead of <out>/tally.db: a SQLite path, memory: or postgres://…
  --sync <mode>     SQLite synchronous mode of the demo store: normal (default: a crash of the
                    process loses nothing, a power cut may lose the last commits, never corrupts)
                    or full (the store's own default: every commit is fsynced)
  --json            print the summary as JSON

With --x402 (default --out ./tally-x402): an x402 desk that pays for market
data on a local chain, every part started and stopped by the demo (a Hardhat
network in a child process, the EIP-3009 token of contracts/TallyUSD.sol, a
facilitator from @x402/core + @x402/evm, resource servers behind
@x402/express, the agent paying with @x402/fetch through Tally): two payments
admitted and settled, one offer_drift, one whose settlement times out and is
recorded UNKNOWN, one refused over budget while it holds its amount, and the
UNKNOWN reconciled from the chain's receipt. Writes tally.db, bundle.jsonl,
receipt.json, receipt.note, engine.vkey, summary.json and two evidence packs
(payment-<ticket>.json, payment-drift.json), then verifies them. Needs
hardhat and the x402 packages (optional peer dependencies; when missing it
says exactly what to npm install). The chain not starting is an error (exit 1).

A progress bar is shown on a terminal (stderr) and never when piped.
Exit codes: 0 every check passed, 1 a check failed, 2 usage error, 3 store or file I/O error.`,
  options: {
    seed: { type: 'string' },
    wakes: { type: 'string' },
    out: { type: 'string' },
    db: { type: 'string' },
    sync: { type: 'string' },
    json: { type: 'boolean' },
    x402: { type: 'boolean' },
    ap2: { type: 'boolean' },
  },
  async run({ values, positionals }, io) {
    if (positionals.length > 0) throw new CliError(`demo takes no arguments (got '${positionals[0]}'). Run 'tally demo --help'.`);
    if (values['x402'] === true && values['ap2'] === true) throw new CliError("--x402 and --ap2 are two different days: choose one. Run 'tally demo --help'.");
    if (values['x402'] === true) return x402Demo(values, io);
    if (values['ap2'] === true) return runAp2(values, io);
    const seed = intOption(values, 'seed', 0, MAX_SEED) ?? 1;
    const wakes = intOption(values, 'wakes', 0, MAX_DEMO_WAKES) ?? 48;
    const sync = str(values, 'sync') ?? 'normal';
    if (sync !== 'full' && sync !== 'normal') throw new CliError('--sync must be full or normal');
    const outArg = str(values, 'out') ?? 'tally-demo';
    if (outArg === '') throw new CliError('--out must not be empty');
    const out = resolve(io.cwd, outArg);
    const db = str(values, 'db');
    if (db === '') throw new CliError('--db must not be empty');
    // Loaded on use, so `tally --help` stays fast.
    const { runDemo } = await import('../../demo/run.js');
    const { formatReport } = await import('../../demo/format.js');
    const bars = new Map<DemoPhase, Progress>();
    let current: Progress | undefined;
    const report = await runDemo({
      seed,
      wakes,
      out,
      ...(db === undefined ? {} : { db: isAbsolute(db) || /^[a-z]+:/i.test(db) ? db : resolve(io.cwd, db) }),
      sync: sync === 'full' ? 'FULL' : 'NORMAL',
      onProgress: (phase, done, total) => {
        let bar = bars.get(phase);
        if (!bar) {
          current?.done();
          bar = progressReporter(io, phase.padEnd(7));
          bars.set(phase, bar);
          current = bar;
        }
        bar.tick(done, total);
      },
    });
    current?.done();
    const shown = { ...report, files: Object.fromEntries(Object.entries(report.files).map(([k, v]) => [k, display(io.cwd, v)])) } as typeof report;
    if (values['json'] === true) println(io.stdout, JSON.stringify(shown, null, 2));
    else for (const line of formatReport(shown, invocation(io))) println(io.stdout, line);
    const ok = report.checks.bundle.ok && report.checks.receipt.ok && report.checks.replay.ok && report.checks.proof.ok && report.checks.log.ok;
    if (!ok) println(io.stderr, 'tally demo: a check failed (see the summary)');
    return ok ? EXIT.ok : EXIT.invalid;
  },
};

/** `tally demo --x402`: the x402 desk's day (src/x402demo), loaded on use with its optional packages. */
async function x402Demo(values: Record<string, unknown>, io: CommandIO): Promise<number> {
  for (const o of ['seed', 'wakes', 'db', 'sync']) if (values[o] !== undefined) throw new CliError(`--${o} does not apply to --x402. Run 'tally demo --help'.`);
  const outArg = str(values as never, 'out') ?? 'tally-x402';
  if (outArg === '') throw new CliError('--out must not be empty');
  const { loadX402Demo } = await import('../../x402demo/index.js');
  const { runX402Demo, x402DemoOk } = await loadX402Demo();
  const { formatX402Report } = await import('../../x402demo/format.js');
  const report = await runX402Demo({ out: resolve(io.cwd, outArg), onChain: (c) => println(io.stderr, `tally demo --x402: local chain (Hardhat network, pid ${c.pid}) listening on ${c.url}`) });
  if (values['json'] === true) println(io.stdout, JSON.stringify(report, null, 2));
  else for (const line of formatX402Report(report, invocation(io), (p) => display(io.cwd, p))) println(io.stdout, line);
  const ok = x402DemoOk(report);
  if (!ok) println(io.stderr, 'tally demo --x402: a check failed (see the summary)');
  return ok ? EXIT.ok : EXIT.invalid;
}

/** `tally demo --ap2`: the AP2 day (src/demo/ap2.ts). */
async function runAp2(values: Parameters<Command['run']>[0]['values'], io: Parameters<Command['run']>[1]): Promise<number> {
  for (const o of ['seed', 'wakes', 'db', 'sync']) if (values[o] !== undefined) throw new CliError(`--${o} does not apply to --ap2`);
  const outArg = str(values, 'out') ?? 'tally-demo-ap2';
  if (outArg === '') throw new CliError('--out must not be empty');
  const { runAp2Demo } = await import('../../demo/ap2.js');
  const { formatAp2Report } = await import('../../demo/ap2-format.js');
  const report = await runAp2Demo({ out: resolve(io.cwd, outArg) });
  const shown = { ...report, files: Object.fromEntries(Object.entries(report.files).map(([k, v]) => [k, display(io.cwd, v)])) } as typeof report;
  if (values['json'] === true) println(io.stdout, JSON.stringify(shown, null, 2));
  else for (const line of formatAp2Report(shown, invocation(io))) println(io.stdout, line);
  const ok = Object.values(report.checks).every((c) => c.ok);
  if (!ok) println(io.stderr, 'tally demo --ap2: a check failed (see the summary)');
  return ok ? EXIT.ok : EXIT.invalid;
}

/** A path as a person typed it: relative to the working directory when inside it. */
function display(cwd: string, p: string): string {
  if (!isAbsolute(p)) return p;
  const r = relative(cwd, p);
  return r === '' ? '.' : r.startsWith('..') || isAbsolute(r) ? p : r;
}
