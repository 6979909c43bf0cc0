/** The wire benchmark runs bounded, reports sane figures and loses nothing. */
import { describe, expect, it } from 'vitest';
import { benchWire } from '../../src/bench/wire.js';

describe('benchWire', () => {
  it('reports throughput and p50/p99 beside the in-process rate, within its count bound (its time bound is maxMs; no wall-clock assertion here)', async () => {
    const r = await benchWire({ turns: 300, concurrency: 8, maxMs: 8_000, inProcessTurns: 500 });
    expect(r.wire.failures).toBe(0);
    expect(r.wire.turns).toBeGreaterThan(0);
    expect(r.wire.turns).toBeLessThanOrEqual(300);
    expect(r.wire.requests).toBe(2 * r.wire.turns);
    expect(r.wire.p50Ms).toBeGreaterThan(0);
    expect(r.wire.p99Ms).toBeGreaterThanOrEqual(r.wire.p50Ms);
    expect(r.inProcess.turnsPerSecond).toBeGreaterThan(0);
    expect(r.ratio).toBeCloseTo(r.wire.turnsPerSecond / r.inProcess.turnsPerSecond, 1);
  });
});

describe('benchWireServed', () => {
  it('drives tally serve in its own process (memory and SQLite) and the echo limit with the same client process, losing nothing', async () => {
    const { benchWireServed } = await import('../../dist/bench/wire-served.js');
    const r = await benchWireServed({ turns: 40, concurrency: 2, maxMs: 20_000, postgresUrl: '' });
    expect(Object.keys(r.runs).sort()).toEqual(['echo', 'memory', 'sqlite']);
    for (const run of Object.values(r.runs)) {
      expect(run.failures).toBe(0);
      expect(run.turns).toBeGreaterThan(0);
      expect(run.turns).toBeLessThanOrEqual(40);
      expect(run.p99Ms).toBeGreaterThanOrEqual(run.p50Ms);
    }
    expect(r.figures.map((f) => f.name)).toHaveLength(2);
    for (const f of r.figures) expect(f.ratio).toBeCloseTo(f.perSecond / f.baselinePerSecond, 1);
  });
});
