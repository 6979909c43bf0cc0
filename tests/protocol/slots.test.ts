/**
 * slotIndex against real chains: in days recorded by the engine (any number
 * of wakes, authored turns and stand-downs, each frame and turn sent twice
 * as a retrying harness would, sealed or not) every frame and turn sits
 * exactly where slotIndex says, and the genesis and finalize where
 * PROTOCOL.md puts them. Seed printed; fixed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { slotIndex } from '../../src/protocol/index.js';
import { createEngine } from '../../src/session/index.js';
import { MemoryStore } from '../../src/store/index.js';

const SEED = 0x5107;
const enc = new TextEncoder();

describe('slotIndex', () => {
  it('names the OPEN frame, its turn and the next wake', () => {
    expect([slotIndex('frame', -1), slotIndex('turn', -1), slotIndex('frame', 0), slotIndex('turn', 0)]).toEqual([1, 2, 3, 4]);
  });

  it(`matches where recorded days put every entry (seed 0x${SEED.toString(16)})`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { maxLength: 12 }), fc.boolean(), async (standDowns, finalize) => {
        const store = new MemoryStore();
        const engine = createEngine({ store });
        const open = await engine.open({ name: 'slots', day: '2026-12-01' });
        if (!open.ok) throw new Error(open.message);
        const sid = open.sessionId;
        for (let ord = -1; ord < standDowns.length - 1; ord++) {
          const frame = { sessionId: sid, ordinal: ord, time: 1_000 + ord * 10 };
          const f = await engine.frame(frame);
          expect(f.ok && (await engine.frame(frame)).ok).toBe(true);
          if (!f.ok) return;
          const body = standDowns[ord + 1] ? ({ kind: 'stand-down', failureClass: 'timeout' } as const) : ({ kind: 'authored', bytes: enc.encode(`answer ${ord}`) } as const);
          const turn = { sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body };
          expect((await engine.turn(turn)).ok && (await engine.turn(turn)).ok).toBe(true);
        }
        if (finalize) expect((await engine.finalize(sid, {})).ok).toBe(true);
        const head = await store.loadHead(sid);
        const entries = await store.readRange(sid, 0, head!.size);
        expect(entries.length).toBe(1 + 2 * standDowns.length + (finalize ? 1 : 0));
        entries.forEach((e, i) => {
          const line = JSON.parse(new TextDecoder().decode(e.bytes)) as { kind: string; ordinal?: number };
          expect([line.kind, line.ordinal]).toEqual([e.kind, e.ordinal]);
          if (e.kind === 'frame' || e.kind === 'turn') expect(slotIndex(e.kind, e.ordinal!)).toBe(i);
          else expect(i).toBe(e.kind === 'genesis' ? 0 : entries.length - 1);
        });
      }),
      { seed: SEED, numRuns: 25 },
    );
  });
});
