/**
 * Tamper property: any single-byte change, dropped, inserted, duplicated or
 * swapped line, or truncated tail of a sealed bundle is rejected by a grader
 * who pinned the receipt root.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import type { Receipt } from '../../src/session/index.js';
import { runDay } from '../helpers/day.js';

let bundle: Uint8Array;
let lines: Uint8Array[];
let receipt: Receipt;

beforeAll(async () => {
  const day = await runDay({ wakes: 6 });
  bundle = day.bundle;
  lines = day.lines;
  receipt = day.receipt!;
});

const pinned = (b: Uint8Array) => verifyBundle([b], { pin: { receiptRoot: receipt.receiptRoot, sessionId: receipt.sessionId, size: receipt.size } });

describe('tampering with a sealed bundle', () => {
  it('the untouched bundle verifies against its pin', async () => {
    expect(await pinned(bundle)).toMatchObject({ ok: true, receiptRoot: receipt.receiptRoot, size: receipt.size });
  });

  it('every single-byte change is rejected (seed 0x7a3e)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 1 << 30 }), fc.integer({ min: 1, max: 255 }), async (pos, delta) => {
        const b = bundle.slice();
        const i = pos % b.length;
        b[i] = (b[i]! + delta) & 255;
        expect((await pinned(b)).ok).toBe(false);
      }),
      { seed: 0x7a3e, numRuns: 600 },
    );
  });

  it('every byte position, flipped once, is rejected', async () => {
    for (let i = 0; i < bundle.length; i++) {
      const b = bundle.slice();
      b[i] = b[i]! ^ 0x01;
      const r = await pinned(b);
      if (r.ok) throw new Error(`flipping byte ${i} went unnoticed`);
    }
  });

  it('every truncation is rejected, even without a pin', async () => {
    for (let n = 0; n < bundle.length; n++) {
      const r = await verifyBundle([bundle.subarray(0, n)]);
      if (r.ok) throw new Error(`truncation to ${n} bytes went unnoticed`);
    }
  });

  it('dropped, inserted, duplicated and swapped lines are rejected (seed 0x7a3f)', async () => {
    const ops = fc.oneof(
      fc.nat().map((i) => ({ op: 'drop' as const, i })),
      fc.tuple(fc.nat(), fc.nat()).map(([i, j]) => ({ op: 'dup' as const, i, j })),
      fc.tuple(fc.nat(), fc.nat()).map(([i, j]) => ({ op: 'swap' as const, i, j })),
      fc.tuple(fc.nat(), fc.string({ minLength: 0, maxLength: 40 })).map(([i, s]) => ({ op: 'insert' as const, i, s })),
    );
    await fc.assert(
      fc.asyncProperty(ops, async (m) => {
        const ls = lines.slice();
        const n = ls.length;
        if (m.op === 'drop') ls.splice(m.i % n, 1);
        else if (m.op === 'dup') ls.splice(m.j % (n + 1), 0, ls[m.i % n]!);
        else if (m.op === 'swap') {
          const a = m.i % n;
          const b = m.j % n;
          if (a === b || ls[a]!.toString() === ls[b]!.toString()) return;
          [ls[a], ls[b]] = [ls[b]!, ls[a]!];
        } else ls.splice(m.i % (n + 1), 0, new TextEncoder().encode(m.s));
        expect((await pinned(encodeBundle(ls))).ok).toBe(false);
      }),
      { seed: 0x7a3f, numRuns: 400 },
    );
  });

  it('names the first bad entry by index with a typed reason', async () => {
    const ls = lines.slice();
    const victim = 4;
    const text = new TextDecoder().decode(ls[victim]);
    ls[victim] = new TextEncoder().encode(text.replace('"ordinal":', '"ordinal": '));
    const r = await pinned(encodeBundle(ls));
    expect(r).toMatchObject({ ok: false, index: victim, code: 'not-canonical' });
  });
});
