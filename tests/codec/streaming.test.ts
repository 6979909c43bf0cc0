import { describe, expect, it } from 'vitest';
import { verifyBundle } from '../../src/codec/index.js';
import { synthBundle } from '../helpers/synth.js';

describe('streaming verification', () => {
  it('verifies a 400,000-entry day (over 100 MB) with bounded heap', async () => {
    const turns = 200_000;
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    let bytes = 0;
    async function* counted() {
      for await (const c of synthBundle(turns)) {
        bytes += c.length;
        yield c;
      }
    }
    const r = await verifyBundle(counted(), {
      onEntry: (e) => {
        if (e.index % 20_000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
      },
    });
    expect(r).toMatchObject({ ok: true, size: 2 * turns + 2, sealed: true });
    // The bundle is far larger than the heap growth: nothing is buffered beyond a chunk and a line.
    expect(bytes).toBeGreaterThan(100 * 1024 * 1024);
    expect(peak - before).toBeLessThan(64 * 1024 * 1024);
  });
});
