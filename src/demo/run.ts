/**
 * `runDemo`: one whole agent-day on a real store, end to end — open, record
 * (the simulated market, the scripted agents and every scripted
 * misbehaviour), seal, export the bundle, verify it, sign and check the
 * receipt, replay the rulings, write and check a single-turn receipt — timing
 * each phase. Writes into `out`: `tally.db` (unless `db` says otherwise),
 * `bundle.jsonl`, `receipt.json`, `receipt.note`, `engine.vkey`,
 * `proof.tlog-proof`, `summary.json`.
 *
 * Re-running the same seed and wakes into the same store reuses the sealed
 * day (nothing is written again; everything is re-exported and re-checked);
 * an interrupted day is resumed. Either way the receipt root is the one a
 * clean run gives: it depends on the seed and the number of wakes only. (The
 * judge rate counts judged proposals across every session of the store, as
 * seed 002 asks: another day of the same seed with another number of wakes,
 * recorded into the same store, shares its hours and sees this day's calls.)
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Engine, type Receipt } from '../session/index.js';
import type { CanonicalObject, ChainError, ChainSummary } from '../protocol/index.js';
import { TallyError } from '../protocol/errors.js';
import { createNotary, openSessionCheckpoint, replayFile, verifyTurnReceipt, type Notary } from '../receipt/index.js';
import { createRefereeRuler, refereeState, signMandateWithKey } from '../referee/index.js';
import { openStore } from '../store/index.js';
import { DeskAgent } from './agent.js';
import { driveDay } from './driver.js';
import { ANVIL_KEY_3, DEMO_AGENTS, DEMO_ENGINE_NAME, demoEngineKey } from './keys.js';
import { demoEngineLog } from './engine-log.js';
import { MarketSim } from './market.js';
import { MAX_SEED } from './prng.js';
import { MAX_DEMO_WAKES } from './limits.js';
import { demoMandate, demoRuler, demoSizeCap } from './referee.js';
import { planDay } from './script.js';
import { readTimeline, type DayCounts, type Notice } from './timeline.js';
import { counted } from './format.js';
import { exportBundle } from './export.js';

export { MAX_DEMO_WAKES };

/** SQLite page cache of the demo store, in KiB. */
const DEMO_CACHE_KIB = 2048;

/** Version of the demo script; part of the spec, so a changed script is a different day. */
export const DEMO_VERSION = 2;

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** PRNG seed, 0 … 2^32−1 (default 1). */
  readonly seed?: number;
  /** Wakes after the OPEN frame (default 48: a day of 30-minute wakes). */
  readonly wakes?: number;
  /** Output directory (created). */
  readonly out: string;
  /** Store location (`openStore` syntax); default `<out>/tally.db`. */
  readonly db?: string;
  /** SQLite `synchronous` for the demo store (default `NORMAL`, see `tally demo --help`). */
  readonly sync?: 'FULL' | 'NORMAL';
  /** Progress of the current phase. */
  readonly onProgress?: (phase: DemoPhase, done: number, total?: number) => void;
}

/** The timed phases, in order. */
export const DEMO_PHASES = ['open', 'record', 'seal', 'export', 'verify', 'receipt', 'replay', 'proof', 'log'] as const;
/** One timed phase. */
export type DemoPhase = (typeof DEMO_PHASES)[number];

/** What the referee holds at the end of the day. */
export interface DemoRefereeSummary {
  readonly instance: string;
  readonly quota: { readonly cap: string; readonly used: string; readonly locked: string; readonly free: string; readonly tx_cap: number; readonly used_txs: number; readonly locked_txs: number };
  /** Tickets by state (ACTIVE, REDEEMED, RELEASED). */
  readonly tickets: Readonly<Record<string, number>>;
  readonly verdicts: { readonly judged: number; readonly allowed: number };
  /** Ticket transitions the runtime reported: applied ones by operation, refused ones by code. */
  readonly transitions: Readonly<Record<string, number>>;
}

/** A check's outcome, as the summary shows it. */
export type Check = { readonly ok: boolean; readonly detail: string };

/** What a demo run reports (`tally demo --json` prints it). */
export interface DemoReport {
  readonly seed: number;
  readonly wakes: number;
  readonly sessionId: string;
  readonly store: string;
  /** `new`: recorded now; `resumed`: an interrupted day finished; `reused`: the sealed day was already in the store. */
  readonly mode: 'new' | 'resumed' | 'reused';
  readonly receipt: Receipt;
  readonly verifierKey: string;
  /** Counts read back from the verified bundle. */
  readonly counts: DayCounts;
  /** Every diagnostic and duplicate seen, by outcome (bundle notices plus the post-seal probe). */
  readonly diagnostics: Readonly<Record<string, number>>;
  readonly referee: DemoRefereeSummary;
  readonly checks: { readonly bundle: Check; readonly receipt: Check; readonly replay: Check; readonly proof: Check & { readonly index: number; readonly ordinal: number }; readonly log: Check & { readonly index: number } };
  readonly files: { readonly dir: string; readonly db?: string; readonly bundle: string; readonly receipt: string; readonly checkpoint: string; readonly verifierKey: string; readonly proof: string; readonly summary: string; readonly log: string; readonly logProof: string; readonly logKey: string };
  /** Milliseconds per phase. */
  readonly timings: Readonly<Record<DemoPhase, number>>;
  readonly totalMs: number;
}

/** The session spec of a demo day: the same seed and wakes always give the same session. */
export function demoSpec(seed: number, wakes: number, market: Pick<MarketSim, 'startTime' | 'stepMs'> = new MarketSim(seed)): CanonicalObject {
  const spec: CanonicalObject = {
    name: `tally-demo seed ${seed}`,
    day: new Date(market.startTime).toISOString().slice(0, 10),
    demo: { version: DEMO_VERSION, seed, wakes },
    agents: Object.fromEntries(DEMO_AGENTS.map((a) => [a.id, a.account.address])),
    intent: { maxTtlHorizonMs: 3_600_000 },
    mandate: demoMandate(seed, wakes, market.startTime, market.stepMs),
  };
  // The principal (Anvil #3) signs the day's mandate: a mandate exists only by its principal.
  return signMandateWithKey(spec, ANVIL_KEY_3);
}

function misuse(message: string, details?: string): never {
  throw new TallyError('TALLY_DEMO_OPTIONS', message, details === undefined ? {} : { details });
}

/**
 * Runs the demo. Throws `TallyError` for bad options, an unusable store or a
 * recorded day that differs from the simulation (`TALLY_DEMO_DIVERGED`);
 * failed checks are reported, not thrown.
 *
 * @example
 * const report = await runDemo({ seed: 1, wakes: 48, out: 'tally-demo' });
 * report.receipt.receiptRoot; // the same on every machine
 */
export async function runDemo(options: DemoOptions): Promise<DemoReport> {
  const seed = options.seed ?? 1;
  const wakes = options.wakes ?? 48;
  if (!Number.isSafeInteger(seed) || seed < 0 || seed > MAX_SEED) misuse(`seed must be an integer from 0 to ${MAX_SEED}`, String(seed));
  if (!Number.isSafeInteger(wakes) || wakes < 0 || wakes > MAX_DEMO_WAKES) misuse(`wakes must be an integer from 0 to ${MAX_DEMO_WAKES}`, String(wakes));
  const out = options.out;
  const location = options.db ?? join(out, 'tally.db');
  const files = {
    dir: out,
    ...(options.db === undefined ? { db: location } : {}),
    bundle: join(out, 'bundle.jsonl'),
    receipt: join(out, 'receipt.json'),
    checkpoint: join(out, 'receipt.note'),
    verifierKey: join(out, 'engine.vkey'),
    proof: join(out, 'proof.tlog-proof'),
    summary: join(out, 'summary.json'),
    log: join(out, 'log'),
    logProof: join(out, 'log-proof.tlog-proof'),
    logKey: join(out, 'log.vkey'),
  };
  const progress = options.onProgress ?? (() => undefined);
  const timings = {} as Record<DemoPhase, number>;
  const started = performance.now();
  let t0 = started;
  const lap = (phase: DemoPhase) => {
    const now = performance.now();
    timings[phase] = Math.round((now - t0) * 10) / 10;
    t0 = now;
  };

  await mkdir(out, { recursive: true });
  const market = new MarketSim(seed);
  const spec = demoSpec(seed, wakes, market);
  // The day only appends and reads recent entries: a 2 MiB page cache (not the driver's 16) keeps a long day's memory in the file.
  const store = await openStore(location, { sqlite: { synchronous: options.sync ?? 'NORMAL', cacheKiB: DEMO_CACHE_KIB } });
  try {
    // ── open ────────────────────────────────────────────────────────────
    const engine = new Engine({ store, ruler: demoRuler(store) });
    const opened = await engine.open(spec);
    if (!opened.ok) throw new TallyError('TALLY_DEMO_DIVERGED', `the demo session was refused: ${opened.diagnostic}`, { details: opened.message });
    const sessionId = opened.sessionId;
    const before = await engine.describe(sessionId);
    if (!before.ok) throw new TallyError('TALLY_DEMO_DIVERGED', `cannot describe the demo session: ${before.diagnostic}`);
    const mode = before.phase === 'sealed' ? 'reused' : before.size > 1 ? 'resumed' : 'new';
    lap('open');

    // ── record ──────────────────────────────────────────────────────────
    let finalNotices: readonly Notice[] = [];
    if (mode !== 'reused') {
      const recordedThrough = before.pending ? before.pending.ordinal : before.nextOrdinal - 1;
      const driven = await driveDay({
        engine,
        sessionId,
        wakes,
        plan: planDay(seed, wakes),
        market,
        desk: new DeskAgent(seed, sessionId, market, demoSizeCap(wakes)),
        instance: String((spec['mandate'] as CanonicalObject)['instance']),
        recordedThrough: before.size > 1 ? recordedThrough : -2,
        onWake: (done, total) => progress('record', done, total),
      });
      finalNotices = driven.finalNotices;
    }
    lap('record');

    // ── seal (and the signed receipt: the engine key signs the checkpoint over every entry) ──
    const key = demoEngineKey();
    const notary = createNotary({ key });
    const sealed = await seal(notary, engine, sessionId, mode === 'reused', finalNotices);
    const { receipt, signedCheckpoint } = sealed;
    const late = await engine.frame({ sessionId, ordinal: wakes, time: market.timeOf(wakes) });
    const lateOutcome = late.ok ? (late.duplicate ? 'duplicate' : 'written') : late.diagnostic;
    lap('seal');

    // ── export ──────────────────────────────────────────────────────────
    await exportBundle(engine, sessionId, files.bundle, (n) => progress('export', n, receipt.size));
    await writeFile(files.checkpoint, signedCheckpoint);
    await writeFile(files.verifierKey, key.verifierKey + '\n');
    await writeFile(files.receipt, JSON.stringify({ ...receipt, engine: DEMO_ENGINE_NAME, verifierKey: key.verifierKey }, null, 2) + '\n');
    lap('export');

    // ── verify the bundle (one pass: chain, pins, timeline) ─────────────
    // The single-turn receipt proves the first admitted transfer (money left the desk), else the first turn.
    let proofTarget = { index: -1, ordinal: -1 };
    let firstTurn = proofTarget;
    const timeline = await readTimeline(files.bundle, {
      requireSealed: true,
      keepRows: false,
      pin: { sessionId, size: receipt.size, receiptRoot: receipt.receiptRoot },
      onEntry: (v) => {
        if (v.entry.kind === 'turn') {
          if (firstTurn.index < 0) firstTurn = { index: v.index, ordinal: v.entry.ordinal };
          if (proofTarget.index < 0 && isAdmittedTransfer(v.entry.ruling)) proofTarget = { index: v.index, ordinal: v.entry.ordinal };
        }
        progress('verify', v.index + 1, receipt.size);
      },
    });
    const bundleCheck: Check = timeline.verdict.ok ? { ok: true, detail: verdictText(timeline.verdict) } : { ok: false, detail: chainErrorText(timeline.verdict) };
    lap('verify');

    // ── verify the signed receipt against the pinned engine key and the verified bundle ──
    const opened2 = openSessionCheckpoint(signedCheckpoint, [key.verifierKey], { sessionId });
    let receiptCheck: Check;
    if (!opened2.ok) receiptCheck = { ok: false, detail: `${opened2.stage}: ${opened2.code}: ${opened2.message}` };
    else if (!timeline.verdict.ok) receiptCheck = { ok: false, detail: 'the bundle did not verify' };
    else if (opened2.checkpoint.size !== timeline.verdict.size || opened2.checkpoint.root !== timeline.verdict.receiptRoot) {
      receiptCheck = { ok: false, detail: `the signed checkpoint (${opened2.checkpoint.size}, ${opened2.checkpoint.root}) is not the bundle's (${timeline.verdict.size}, ${timeline.verdict.receiptRoot})` };
    } else receiptCheck = { ok: true, detail: `signed by ${opened2.checkpoint.signedBy.map((x) => x.name).join(', ')} over all ${counted(opened2.checkpoint.size, 'entry')}` };
    lap('receipt');

    // ── replay every ruling from the bundle alone (fresh engine, referee without a judge) ──
    const replayed = await replayFile(files.bundle, {
      ruler: (s) => createRefereeRuler({ store: s }),
      pin: { sessionId, size: receipt.size, receiptRoot: receipt.receiptRoot },
      onEntry: (i) => progress('replay', i + 1, receipt.size),
    });
    const replayCheck: Check = replayed.ok
      ? { ok: true, detail: `${counted(replayed.size, 'entry')} re-derived, ${counted(replayed.rulings, 'ruling')} identical${replayed.externalFacts.length > 0 ? `, ${counted(replayed.externalFacts.length, 'external fact')}` : ''}` }
      : replayed.stage === 'chain'
        ? { ok: false, detail: `entry ${replayed.index}: ${replayed.code}: ${replayed.message}` }
        : { ok: false, detail: `entry ${replayed.divergences[0]?.index}: ${replayed.divergences[0]?.kind}: ${replayed.divergences[0]?.message}` };
    lap('replay');

    // ── a single-turn receipt, proved against the sealed checkpoint, checked offline ──
    if (proofTarget.index < 0) proofTarget = firstTurn;
    let proofCheck: Check & { index: number; ordinal: number } = { ok: false, detail: 'no turn to prove', index: -1, ordinal: -1 };
    if (proofTarget.index >= 0) {
      const tr = await notary.turnReceipt(engine, sessionId, proofTarget.index, { signedCheckpoint });
      if (!tr.ok) {
        proofCheck = { ok: false, detail: `${tr.code}: ${tr.message}`, ...proofTarget };
      } else {
        await writeFile(files.proof, tr.text);
        const v = verifyTurnReceipt(tr.text, { verifiers: [key.verifierKey], pin: { sessionId, size: receipt.size, receiptRoot: receipt.receiptRoot } });
        proofCheck = v.ok
          ? { ok: true, detail: `entry ${v.index} (a ${v.entry.kind}) is in the signed tree of ${counted(v.checkpoint.size, 'entry')}`, ...proofTarget }
          : { ok: false, detail: `${v.stage}: ${v.code}: ${v.message}`, ...proofTarget };
      }
    }
    lap('proof');

    // ── the engine log: its tiles, and the seal's inclusion in its signed checkpoint ──
    const logCheck = await demoEngineLog(store, { origin: `${DEMO_ENGINE_NAME}/${sessionId}`, size: receipt.size, root: receipt.receiptRoot }, { dir: files.log, proof: files.logProof, verifierKey: files.logKey });
    lap('log');

    const diagnostics: Record<string, number> = { ...timeline.counts.notices };
    diagnostics[lateOutcome] = (diagnostics[lateOutcome] ?? 0) + 1;
    const report: DemoReport = {
      seed,
      wakes,
      sessionId,
      store: `${store.name}${store.name.startsWith('sqlite') ? ` (synchronous=${options.sync ?? 'NORMAL'})` : ''}`,
      mode,
      receipt,
      verifierKey: key.verifierKey,
      counts: timeline.counts,
      diagnostics,
      referee: await refereeSummary(engine, sessionId),
      checks: { bundle: bundleCheck, receipt: receiptCheck, replay: replayCheck, proof: proofCheck, log: logCheck },
      files,
      timings,
      totalMs: Math.round(performance.now() - started),
    };
    await writeFile(files.summary, JSON.stringify(report, null, 2) + '\n');
    return report;
  } finally {
    await store.close();
  }
}

async function seal(notary: Notary, engine: Engine, sessionId: string, already: boolean, notices: readonly Notice[]): Promise<{ receipt: Receipt; signedCheckpoint: string }> {
  if (already) {
    const d = await engine.describe(sessionId);
    const cp = await notary.issueCheckpoint(engine, sessionId);
    if (!d.ok || !d.receipt || !cp.ok) throw new TallyError('TALLY_DEMO_DIVERGED', 'the sealed demo day cannot be re-certified');
    return { receipt: d.receipt, signedCheckpoint: cp.signedCheckpoint };
  }
  const artifacts: CanonicalObject = notices.length > 0 ? { runtime: 'tally-demo', notices: notices as unknown as CanonicalObject[] } : { runtime: 'tally-demo' };
  const fin = await notary.sealWithReceipt(engine, sessionId, artifacts);
  if (!fin.ok) throw new TallyError('TALLY_DEMO_DIVERGED', `the seal was refused: ${fin.diagnostic}`, { details: fin.message });
  return { receipt: fin.receipt, signedCheckpoint: fin.signedCheckpoint };
}

async function refereeSummary(engine: Engine, sessionId: string): Promise<DemoRefereeSummary> {
  const r = await refereeState(engine, sessionId);
  if (!r.ok) throw new TallyError('TALLY_DEMO_DIVERGED', `the demo day has no referee state: ${r.message}`);
  const v = r.referee;
  const tickets: Record<string, number> = {};
  for (const t of v.tickets) tickets[t.state] = (tickets[t.state] ?? 0) + 1;
  const transitions: Record<string, number> = {};
  for (const t of v.transitions) {
    const k = t['ok'] === true ? String(t['op']) : String(t['code']);
    transitions[k] = (transitions[k] ?? 0) + 1;
  }
  return { instance: v.instance, quota: v.quota, tickets, verdicts: v.verdicts, transitions };
}

function isAdmittedTransfer(ruling: CanonicalObject | undefined): boolean {
  if (!ruling) return false;
  const members = Object.values(ruling).filter((m): m is CanonicalObject => typeof m === 'object' && m !== null && !Array.isArray(m));
  const intent = ruling['intent'] as Record<string, unknown> | undefined;
  return intent?.['admitted'] === true && intent['action'] === 'transfer' && members.every((m) => m['admitted'] !== false);
}

function verdictText(v: ChainSummary): string {
  return `${counted(v.size, 'entry')} (${counted(v.frames, 'frame')}, ${counted(v.turns, 'turn')})${v.sealed ? ', sealed' : ''}`;
}

function chainErrorText(e: ChainError): string {
  return `entry ${e.index}: ${e.code}: ${e.message}`;
}
