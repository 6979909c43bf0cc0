/**
 * A demo day (seed 3, 24 wakes, under the referee with its judge) recorded
 * with a real OpenTelemetry SDK registered: the span tree has one span per
 * verb call with the store append, intent validation and judge calls as
 * children, and the turn counter by outcome equals what the transcript itself
 * says (admitted, refused by code, recorded) plus the driver's probes
 * (duplicates, diagnostics), which are never written.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DeskAgent, MarketSim, demoEngineKey, demoRuler, demoSpec, driveDay, planDay, readTimeline } from '../../src/demo/index.js';
import { createNotary } from '../../src/receipt/index.js';
import { Engine } from '../../src/session/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { ATTR, METRIC, SPAN } from '../../src/telemetry/index.js';
import { installSdk, parentOf, tally } from './helpers.js';

/** The driver's probes that are turns (the others are frames); see PROBES in src/demo/script.ts. */
const TURN_PROBES = new Set(['early-turn', 'stale-answer', 'fork-attempt', 'bad-declared-hash', 'network-retry', 'resubmission']);

describe('a demo day under a registered SDK (seed 3, 24 wakes)', async () => {
  const sdk = installSdk();
  afterAll(() => sdk.shutdown());
  const seed = 3;
  const wakes = 24;
  const store = new MemoryStore();
  const engine = new Engine({ store, ruler: demoRuler(store) });
  const market = new MarketSim(seed);
  const spec = demoSpec(seed, wakes, market);
  const open = await engine.open(spec);
  if (!open.ok) throw new Error(open.message);
  const sessionId = open.sessionId;
  const instance = (spec['mandate'] as { instance: string }).instance;
  const drive = await driveDay({ engine, sessionId, wakes, plan: planDay(seed, wakes), market, desk: new DeskAgent(seed, sessionId, market), instance, recordedThrough: -2 });
  const fin = await engine.finalize(sessionId, { note: 'telemetry' });
  if (!fin.ok) throw new Error(fin.message);
  const notary = createNotary({ key: demoEngineKey() });
  const cp = await notary.issueCheckpoint(engine, sessionId);
  if (!cp.ok) throw new Error('checkpoint refused');
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sessionId)) lines.push(l, new Uint8Array([10]));
  const file = join(mkdtempSync(join(tmpdir(), 'tally-otel-')), 'day.jsonl');
  writeFileSync(file, Buffer.concat(lines));
  const timeline = await readTimeline(file, { requireSealed: true });
  const c = timeline.counts;
  const spans = sdk.spans();
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const named = (n: string) => spans.filter((s) => s.name === n);
  const turnProbes = drive.probed.filter((p) => TURN_PROBES.has(p.probe));

  it('the transcript is what the demo records (sanity)', () => {
    expect(timeline.verdict).toMatchObject({ ok: true });
    expect(c.turns).toBe(wakes + 1);
    expect(c.rejected).toBeGreaterThan(0);
    expect(turnProbes.length).toBeGreaterThan(0);
  });

  it('counts turns by outcome exactly as the transcript and the probes say', async () => {
    expect(await sdk.sum(METRIC.turns, { outcome: 'admitted' })).toBe(c.admitted);
    const refused: Record<string, number> = {};
    for (const p of await sdk.points(METRIC.turns)) if (p.attributes['outcome'] === 'refused') refused[p.attributes['code'] as string] = p.value as number;
    expect(refused).toEqual(c.rejectedByCode);
    const recorded = (await sdk.sum(METRIC.turns, { outcome: 'recorded' })) + (await sdk.sum(METRIC.turns, { outcome: 'ruled' }));
    expect(recorded).toBe(c.turns - c.admitted - c.rejected);
    const diag: Record<string, number> = {};
    for (const p of await sdk.points(METRIC.turns)) if (p.attributes['outcome'] === 'diagnostic') diag[p.attributes['code'] as string] = p.value as number;
    expect(diag).toEqual(tally(turnProbes.filter((p) => p.outcome !== 'duplicate').map((p) => p.outcome)));
    expect(await sdk.sum(METRIC.turns, { outcome: 'duplicate' })).toBe(turnProbes.filter((p) => p.outcome === 'duplicate').length);
    expect(await sdk.sum(METRIC.turns)).toBe(named(SPAN.verb('turn')).length);
  });

  it('has one span per verb call, with the engine-confirmed attributes', () => {
    expect(named(SPAN.verb('open'))).toHaveLength(1);
    expect(named(SPAN.verb('finalize'))).toHaveLength(1);
    expect(named(SPAN.verb('turn')).length).toBe(c.turns + turnProbes.length);
    const written = named(SPAN.verb('turn')).filter((s) => s.attributes[ATTR.duplicate] === false);
    expect(written).toHaveLength(c.turns);
    const indices = written.map((s) => s.attributes[ATTR.index]);
    const turnRows = timeline.rows.filter((r) => r.kind === 'turn').map((r) => r.index);
    expect(indices).toEqual(turnRows);
    for (const s of written) {
      expect(s.attributes[ATTR.session]).toBe(sessionId);
      expect(typeof s.attributes[ATTR.ordinal]).toBe('number');
    }
    const refusals = named(SPAN.verb('turn')).filter((s) => s.attributes[ATTR.diagnostic] !== undefined).map((s) => s.attributes[ATTR.diagnostic] as string);
    expect(tally(refusals)).toEqual(tally(turnProbes.filter((p) => p.outcome !== 'duplicate').map((p) => p.outcome)));
    const rulings = written.filter((s) => s.attributes[ATTR.outcome] === 'refused').map((s) => s.attributes[ATTR.ruling] as string);
    expect(tally(rulings)).toEqual(c.rejectedByCode);
  });

  it('nests appends, intent validation and judge calls under the verb that caused them', () => {
    const ancestor = (s: (typeof spans)[number]): string | undefined => {
      for (let p = byId.get(parentOf(s)); p; p = byId.get(parentOf(p))) if (p.name.startsWith('tally.') && !p.name.startsWith('tally.store') && p.name.split('.').length === 2) return p.name;
      return undefined;
    };
    const appends = named(SPAN.append);
    // One append per written entry after the genesis (open creates; it does not append).
    expect(appends).toHaveLength(timeline.rows.length - 1);
    expect(tally(appends.map((s) => ancestor(s)!))).toEqual({ 'tally.frame': c.frames, 'tally.turn': c.turns, 'tally.finalize': 1 });
    for (const s of appends) {
      expect(s.attributes[ATTR.batch]).toBe(1);
      expect(s.attributes[ATTR.storeOutcome]).toBe('ok');
    }
    const intents = named(SPAN.intent);
    expect(intents).toHaveLength(c.intents);
    for (const s of intents) expect(ancestor(s)).toBe('tally.turn');
    const judges = named(SPAN.judge);
    expect(judges.length).toBeGreaterThan(0);
    for (const s of judges) {
      expect(ancestor(s)).toBe('tally.turn');
      expect(s.attributes[ATTR.model]).toMatch(/^[a-z]/);
    }
    expect(named(SPAN.checkpoint)).toHaveLength(1);
  });

  it('records verification, sessions, append latency and judge metrics', async () => {
    const verify = named(SPAN.verb('verify'));
    expect(verify).toHaveLength(1);
    expect(verify[0]!.attributes[ATTR.entries]).toBe(timeline.rows.length);
    expect(await sdk.sum(METRIC.verifyEntries)).toBe(timeline.rows.length);
    expect(await sdk.sum(METRIC.verifyRate)).toBe(1);
    expect(await sdk.sum(METRIC.sessionsOpened)).toBe(1);
    expect(await sdk.sum(METRIC.sessionsSealed)).toBe(1);
    expect(await sdk.sum(METRIC.appendDuration, { outcome: 'ok' })).toBe(timeline.rows.length - 1);
    expect(await sdk.sum(METRIC.batchSize)).toBe(timeline.rows.length - 1);
    expect(await sdk.sum(METRIC.judgeDuration)).toBe(named(SPAN.judge).length);
    expect(await sdk.sum(METRIC.storeErrors)).toBe(0);
  });
});
