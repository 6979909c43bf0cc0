/** The telemetry benchmark runs bounded and reports its three figures, each beside a same-run baseline. */
import { describe, expect, it } from 'vitest';
import { benchTelemetry } from '../../src/bench/telemetry.js';

describe('benchTelemetry', () => {
  it('reports the no-op cost, the SDK cost in process and on the wire', async () => {
    const figures = await benchTelemetry({ turns: 200, wireTurns: 100 });
    expect(figures.map((f) => f.baselineName)).toEqual(['same calls uninstrumented', 'no SDK (API no-op)', 'without --otel']);
    for (const f of figures) {
      expect(f.perSecond).toBeGreaterThan(0);
      expect(f.baselinePerSecond).toBeGreaterThan(0);
      expect(f.ratio).toBeCloseTo(f.perSecond / f.baselinePerSecond, 1);
    }
  }, 60_000);
});
