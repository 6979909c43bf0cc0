/**
 * `npm run bench`: every benchmark, each figure printed beside a baseline
 * measured in the same run (ratios, never wall-clock assertions).
 *
 * Environment: `TALLY_BENCH_TURNS` (core turns, default 50,000),
 * `TALLY_BENCH_INTENT_TURNS` (intent turns per session, default 80),
 * `TALLY_BENCH_ONLY` (comma list of sections: core, intents, store, receipt,
 * wire, wire-served, referee, hostile, peer, telemetry, web, witness, longday, log, payments, mcp; default all);
 * `TALLY_BENCH_PAYMENTS` (x402 payments ruled, default 400);
 * `TALLY_BENCH_PEER_ENTRIES` sizes peer; `TALLY_BENCH_WEB_ENTRIES` (entries of
 * the day the browser verifies, default 100,000); `TALLY_BENCH_LONGDAY_N` (entries of
 * the long day recorded, sealed, verified, replayed and proved, default 1,000,000); `TALLY_BENCH_MCP_CALLS`
 * (calls per side of the MCP gateway section, default 400). Sections whose module is missing or fails are
 * reported and skipped, never fatal to the others.
 */
import { availableParallelism } from 'node:os';
import { effectiveCores } from './cores.js';
import { benchCore, type Figure } from './core.js';
import { benchIntentSessions } from './intents.js';

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

function print(title: string, figures: readonly Figure[]): void {
  process.stdout.write(`\n== ${title}\n`);
  for (const f of figures) {
    process.stdout.write(`${f.name}: ${fmt(f.perSecond)}/s  |  ${f.baselineName}: ${fmt(f.baselinePerSecond)}/s  |  ratio ${f.ratio.toFixed(3)}${f.note ? `  (${f.note})` : ''}\n`);
  }
}

type Loose = Record<string, unknown>;

function isFigures(x: unknown): x is Figure[] {
  return Array.isArray(x) && x.every((f) => typeof f === 'object' && f !== null && typeof (f as Loose)['perSecond'] === 'number');
}

/** Figures of the other areas' benchmark modules, whatever shape each returns. */
function figuresOf(name: string, r: unknown): Figure[] {
  if (isFigures(r)) return r;
  const o = (typeof r === 'object' && r !== null ? r : {}) as Loose;
  if (isFigures(o['figures'])) return o['figures'];
  const wire = o['wire'] as Loose | undefined;
  const inProcess = o['inProcess'] as Loose | undefined;
  if (name === 'wire' && wire && inProcess && typeof wire['turnsPerSecond'] === 'number' && typeof inProcess['turnsPerSecond'] === 'number') {
    return [
      {
        name: `wire turns (${String(wire['concurrency'])} clients)`,
        perSecond: Math.round(wire['turnsPerSecond']),
        baselineName: 'in-process turns',
        baselinePerSecond: Math.round(inProcess['turnsPerSecond']),
        ratio: Number(o['ratio']),
        note: `p50 ${String(wire['p50Ms'])} ms, p99 ${String(wire['p99Ms'])} ms, failures ${String(wire['failures'])}`,
      },
    ];
  }
  throw new Error('the module returned no figures');
}

/** Another area's benchmark: module file (next to this one) and the function it exports. */
const OPTIONAL: ReadonlyArray<readonly [section: string, file: string, fn: string]> = [
  ['store', './store.js', 'benchStores'],
  ['receipt', './receipt.js', 'benchReceipts'],
  ['wire', './wire.js', 'benchWire'],
  ['wire-served', './wire-served.js', 'benchWireServed'],
  ['peer', './peer.js', 'benchPeer'],
  ['referee', './referee.js', 'benchReferee'],
  ['hostile', './hostile.js', 'benchHostile'],
  ['telemetry', './telemetry.js', 'benchTelemetry'],
  ['web', './web.js', 'benchWeb'],
  ['witness', './witness.js', 'benchWitness'],
  ['longday', './longday.js', 'benchLongday'],
  ['log', './log.js', 'benchLog'],
  ['payments', './payments.js', 'benchPayments'],
  ['mcp', './mcp.js', 'benchMcp'],
];

const only = process.env['TALLY_BENCH_ONLY']?.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
const wanted = (section: string): boolean => only === undefined || only.includes(section);
const turns = Number(process.env['TALLY_BENCH_TURNS'] ?? 50_000);
const intentTurns = Number(process.env['TALLY_BENCH_INTENT_TURNS'] ?? 80);

process.stdout.write(`tally bench — node ${process.version}, ${turns} turns\n`);
// Parallel figures (worker threads) can only beat single-thread ones when cores are free.
const cores = async (when: string): Promise<void> => {
  process.stdout.write(`effective cores for 2 threads ${when}: ${(await effectiveCores()).toFixed(2)} of ${availableParallelism()}\n`);
};
await cores('at start');
if (wanted('core')) print('core', await benchCore(turns));
if (wanted('intents')) print('intents (through the session)', await benchIntentSessions({ sessions: 8, turnsPerSession: intentTurns }));
if (wanted('core') || wanted('intents')) await cores('after core and intents');
for (const [section, file, fn] of OPTIONAL) {
  if (!wanted(section)) continue;
  let mod: Loose;
  try {
    mod = (await import(new URL(file, import.meta.url).href)) as Loose;
  } catch {
    process.stdout.write(`\n== ${section}: skipped (no ${file})\n`);
    continue;
  }
  const run = mod[fn];
  if (typeof run !== 'function') {
    process.stdout.write(`\n== ${section}: skipped (${file} exports no ${fn})\n`);
    continue;
  }
  try {
    print(section, figuresOf(section, await (run as () => Promise<unknown>)()));
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (message.startsWith('skipped: ')) process.stdout.write(`\n== ${section}: ${message}\n`);
    else process.stdout.write(`\n== ${section}: failed: ${message}\n`);
  }
}
