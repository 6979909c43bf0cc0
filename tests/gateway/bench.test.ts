/**
 * The bench section `mcp` (src/bench/mcp.ts) runs small: both figures come
 * back with a same-run baseline, the added p99 and the medians in the note. No wall-clock
 * assertion (docs/PERFORMANCE.md has the measured figures).
 */
import { describe, expect, it } from 'vitest';
import { benchMcp } from '../../src/bench/mcp.js';

describe('bench section mcp', () => {
  it('measures calls/s through a bare relay and tally mcp proxy (memory and SQLite) against the direct upstream, with the added p99', async () => {
    process.env['TALLY_BENCH_MCP_CALLS'] = '20';
    const figures = await benchMcp();
    expect(figures).toHaveLength(3);
    for (const f of figures) {
      expect(f.perSecond).toBeGreaterThan(0);
      expect(f.baselinePerSecond).toBeGreaterThan(0);
      expect(f.ratio).toBeCloseTo(f.perSecond / f.baselinePerSecond, 6);
      expect(f.note).toMatch(/20 sequential calls; p99 [0-9.]+ ms vs direct [0-9.]+ ms: added p99 -?[0-9.]+ ms; p50 [0-9.]+ ms vs direct [0-9.]+ ms: added p50 -?[0-9.]+ ms, ratio of medians [0-9.]+/);
    }
  }, 120_000);
});
