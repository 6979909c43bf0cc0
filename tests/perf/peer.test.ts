/** The hypercore side-by-side bench runs, verifies both sides and reports four positive rates (no wall-clock assertion). */
import { describe, expect, it } from 'vitest';
import { benchPeer } from '../../src/bench/peer.js';

describe('benchPeer', () => {
  it('records, verifies and replicates the same entries in Tally and hypercore', async () => {
    const { figures } = await benchPeer(20);
    expect(figures).toHaveLength(2);
    for (const f of figures) {
      expect(f.perSecond).toBeGreaterThan(0);
      expect(f.baselinePerSecond).toBeGreaterThan(0);
    }
    expect(figures[0]!.name).toContain('42 entries');
  });
});
