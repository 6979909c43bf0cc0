/**
 * Long-day benchmark (issue #15, long days in bounded memory): a day of N
 * entries (default 1,000,000; env `TALLY_BENCH_LONGDAY_N` scales it down) is
 * recorded into SQLite, sealed, exported, verified, replayed and proved, each
 * step in its own fresh process (longday-child.ts) so its peak RSS is its own.
 * Each figure is the step's entries per second; the baseline is the day's
 * SHA-256 rate over the same number of entries of the same size measured in
 * the same run, and the note gives the peak RSS against the 256 MB budget.
 * The last step, `demo`, is `tally demo` whole (record, seal, export, verify,
 * replay, prove in ONE process) on a day of up to 100,004 entries
 * (`longdayDemoEntries`, `demoWakes`).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawHashRate, type Figure } from './core.js';

/** Every step, in the order the bench runs them. */
export const LONGDAY_STEPS = ['record', 'seal', 'export', 'verify', 'replay', 'prove-store', 'prove-bundle', 'demo'] as const;
/** One step. */
export type LongdayStep = (typeof LONGDAY_STEPS)[number];

/** One turn in this many carries a signed Intent (a nonce the replay must remember); the rest are unsigned notes. */
export const INTENT_EVERY = 64;

/** Wakes of a `tally demo` day of about `entries` entries (genesis, a frame and a turn per wake and the OPEN frame, the seal). */
export function demoWakes(entries: number): number {
  return Math.max(0, Math.floor((entries - 4) / 2));
}

/** The peak RSS each step must stay under (issue #15). */
export const LONGDAY_BUDGET_MB = 256;

/** What one step measured. */
export interface LongdayStepResult {
  readonly step: LongdayStep;
  readonly entries: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly peakRssMb: number;
  /** `peakRssMb / LONGDAY_BUDGET_MB`: at most 1 is within budget. */
  readonly budgetRatio: number;
  readonly detail: string;
}

interface ChildLine {
  readonly step: LongdayStep;
  readonly ms: number;
  readonly maxRssKb: number;
  readonly detail: string;
}

/** The child script: next to this module when built, else (this module run from src/ by the tests) the built one in dist/. */
function childScript(): string {
  const beside = fileURLToPath(new URL('./longday-child.js', import.meta.url));
  return existsSync(beside) ? beside : fileURLToPath(new URL('../../dist/bench/longday-child.js', import.meta.url));
}

/** Runs one step in a fresh process. */
export function runLongdayStep(step: LongdayStep, dir: string, entries: number): Promise<ChildLine> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript(), step, dir, String(entries)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as ChildLine) : reject(new Error(`longday ${step} exited with ${code}: ${err.trim().split('\n').slice(-3).join(' | ')}`))));
  });
}

/** Options of {@link benchLongday}. */
export interface LongdayOptions {
  /** Entries of the day, seal included (default: env `TALLY_BENCH_LONGDAY_N`, else 1,000,000). */
  readonly entries?: number;
  /** Entries of the `demo` step's day (default: env `TALLY_BENCH_LONGDAY_DEMO_N`, else the day's entries up to 100,004). */
  readonly demoEntries?: number;
  /** Working directory (default: a fresh one under the OS temp dir, removed afterwards). */
  readonly dir?: string;
  /** Called after each step (the bench prints as it goes: a full day takes minutes). */
  readonly onStep?: (r: LongdayStepResult) => void;
}

/** The entries of the day from the environment (`TALLY_BENCH_LONGDAY_N`), default 1,000,000. */
export function longdayEntries(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const v = env['TALLY_BENCH_LONGDAY_N'];
  const n = v === undefined || v === '' ? 1_000_000 : Number(v);
  if (!Number.isSafeInteger(n) || n < 4) throw new Error(`TALLY_BENCH_LONGDAY_N must be an integer >= 4, got ${v}`);
  return n;
}

/**
 * The entries of the `demo` step's day: env `TALLY_BENCH_LONGDAY_DEMO_N`, else
 * `entries` up to 100,004 (50,000 wakes). `tally demo` runs ~1,000 entries/s
 * here, so a million-entry demo would add about 20 minutes to the bench; its
 * peak RSS is flat from 20,000 wakes on (ARCHITECTURE.md, "Long days").
 */
export function longdayDemoEntries(entries: number, env: Readonly<Record<string, string | undefined>> = process.env): number {
  const v = env['TALLY_BENCH_LONGDAY_DEMO_N'];
  const n = v === undefined || v === '' ? Math.min(entries, 100_004) : Number(v);
  if (!Number.isSafeInteger(n) || n < 4) throw new Error(`TALLY_BENCH_LONGDAY_DEMO_N must be an integer >= 4, got ${v}`);
  return n;
}

/**
 * Runs every step over one day and returns one result per step.
 *
 * @example
 * const steps = await runLongday({ entries: 2_000 });
 */
export async function runLongday(options: LongdayOptions = {}): Promise<LongdayStepResult[]> {
  const entries = options.entries ?? longdayEntries();
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'tally-longday-'));
  const out: LongdayStepResult[] = [];
  try {
    for (const step of LONGDAY_STEPS) {
      const n = step === 'demo' ? (options.demoEntries ?? longdayDemoEntries(entries)) : entries;
      const c = await runLongdayStep(step, dir, n);
      const peakRssMb = Math.round(c.maxRssKb / 1024);
      const r: LongdayStepResult = {
        step,
        entries: n,
        seconds: c.ms / 1000,
        perSecond: Math.round((n / c.ms) * 1000),
        peakRssMb,
        budgetRatio: peakRssMb / LONGDAY_BUDGET_MB,
        detail: c.detail,
      };
      out.push(r);
      options.onStep?.(r);
    }
    return out;
  } finally {
    if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

/** Formats one step as the bench prints it. */
export function formatLongdayStep(r: LongdayStepResult): string {
  return `${r.step.padEnd(12)} ${r.entries.toLocaleString('en-US')} entries  ${r.seconds.toFixed(1)} s  ${r.perSecond.toLocaleString('en-US')}/s  peak RSS ${r.peakRssMb} MB  (${r.budgetRatio.toFixed(2)} of ${LONGDAY_BUDGET_MB} MB)  ${r.detail}`;
}

/**
 * `npm run bench` section `longday`: prints each step as it finishes and
 * returns the figures (entries/s beside SHA-256 of as many entries of the
 * day's mean size).
 */
export async function benchLongday(): Promise<Figure[]> {
  const entries = longdayEntries();
  const dir = mkdtempSync(join(tmpdir(), 'tally-longday-'));
  try {
    process.stdout.write(`\n-- longday: ${entries.toLocaleString('en-US')} entries, each step in its own process (budget ${LONGDAY_BUDGET_MB} MB peak RSS per step)\n`);
    const steps = await runLongday({ entries, dir, onStep: (r) => process.stdout.write(`${formatLongdayStep(r)}\n`) });
    const meanBytes = Math.round(statSync(join(dir, 'bundle.jsonl')).size / entries);
    // The same-run baseline: SHA-256 of an entry-sized buffer, with the function every bench section uses.
    const baseline = rawHashRate([new Uint8Array(Math.max(1, meanBytes)).fill(97)], Math.min(entries, 200_000));
    return steps.map((r) => ({
      name: `long day: ${r.step}`,
      perSecond: r.perSecond,
      baselineName: `SHA-256 of ${meanBytes}-byte entries`,
      baselinePerSecond: baseline,
      ratio: r.perSecond / baseline,
      note: `${r.entries.toLocaleString('en-US')} entries in ${r.seconds.toFixed(1)} s; peak RSS ${r.peakRssMb} MB = ${r.budgetRatio.toFixed(2)} of the ${LONGDAY_BUDGET_MB} MB budget`,
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
