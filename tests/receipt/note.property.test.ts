import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { generateEngineKey, type EngineKey } from '../../src/receipt/keys/index.js';
import { openNote, signNote } from '../../src/receipt/note/index.js';

// A fixed pool of keys: key generation is random by nature, so the property
// explores texts, signer subsets and mutations, and the pool stays constant.
const POOL: EngineKey[] = ['tally.example/a', 'tally.example/b', 'witness.example/c', 'd'].map((n) => generateEngineKey(n));

/** Note texts: lines of arbitrary graphemes (controls replaced), blank lines allowed, ending in "\n". */
const textArb = fc
  .array(fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => s.replace(/[\u0000-\u001f]/g, '.')), { minLength: 1, maxLength: 5 })
  .map((lines) => `${lines.join('\n')}\n`);

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('signed notes — properties', () => {
  test('sign → open round trip: verified = pinned signers, unverified = the rest (seed 0x5167)', () => {
    fc.assert(
      fc.property(textArb, fc.subarray(POOL, { minLength: 1 }), fc.subarray(POOL), (text, signers, pinned) => {
        const r = openNote(signNote(text, signers), pinned);
        const pinnedSigners = signers.filter((s) => pinned.includes(s));
        if (pinnedSigners.length === 0) return !r.ok && r.code === 'no-pinned-signature';
        return (
          r.ok &&
          r.text === text &&
          JSON.stringify(r.verified.map((s) => s.name)) === JSON.stringify(pinnedSigners.map((s) => s.name)) &&
          JSON.stringify(r.unverified.map((s) => s.name)) === JSON.stringify(signers.filter((s) => !pinned.includes(s)).map((s) => s.name))
        );
      }),
      { seed: 0x5167, numRuns: 200 },
    );
  });

  test('any single-byte change to a note signed by one pinned key is rejected (seed 0x7a11)', () => {
    const key = POOL[0]!;
    fc.assert(
      fc.property(textArb, fc.nat(), fc.integer({ min: 1, max: 255 }), (text, pos, xor) => {
        const bytes = utf8(signNote(text, [key]));
        const i = pos % bytes.length;
        bytes[i] = bytes[i]! ^ xor;
        const r = openNote(bytes, [key]);
        return !r.ok;
      }),
      { seed: 0x7a11, numRuns: 400 },
    );
  });

  test('with several pinned signers, a single-byte change is rejected or only drops the damaged signature — the text never changes (seed 0x7a12)', () => {
    const signers = POOL.slice(0, 3);
    fc.assert(
      fc.property(textArb, fc.nat(), fc.integer({ min: 1, max: 255 }), (text, pos, xor) => {
        const bytes = utf8(signNote(text, signers));
        const i = pos % bytes.length;
        bytes[i] = bytes[i]! ^ xor;
        const r = openNote(bytes, signers);
        return !r.ok || (r.text === text && r.verified.length === signers.length - 1);
      }),
      { seed: 0x7a12, numRuns: 400 },
    );
  });

  test('exhaustive on Go\'s note: every byte position, every xor value of a few, is rejected', () => {
    const key = POOL[1]!;
    const base = utf8(signNote("If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n", [key]));
    const accepted: string[] = [];
    for (let i = 0; i < base.length; i++) {
      for (const xor of [0x01, 0x20, 0x80, 0xff]) {
        const b = base.slice();
        b[i] = b[i]! ^ xor;
        if (openNote(b, [key]).ok) accepted.push(`${i}^${xor}`);
      }
    }
    expect(accepted).toEqual([]);
  });
});
