/**
 * The proof lines of a tlog-proof are read by a one-pass fast path when all
 * of them are well formed, and by the line loop otherwise: every layout near
 * the fast path's edges must get the line loop's verdict (the code and, for
 * an accepted text, the same hashes and a byte-exact round trip).
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { formatTlogProof, parseTlogProof } from '../../src/receipt/checkpoint/index.js';

const CP = 'o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n\u2014 o AAAAAQ==\n';
const b64 = (u: Uint8Array): string => Buffer.from(u).toString('base64');
const text = (lines: readonly string[]): string => `c2sp.org/tlog-proof@v1\nindex 3\n${lines.map((l) => `${l}\n`).join('')}\n${CP}`;
const code = (t: string): string => {
  const r = parseTlogProof(t);
  return r.ok ? 'ok' : r.code;
};
const hash = (n: number): string => b64(new Uint8Array(32).fill(n));

describe('tlog-proof lines', () => {
  test('0 to 64 hashes parse to themselves; 65 are too many', () => {
    for (const n of [0, 1, 2, 3, 17, 63, 64]) {
      const proof = Array.from({ length: n }, (_, i) => new Uint8Array(32).fill(i));
      const t = formatTlogProof({ index: 3, proof, signedCheckpoint: CP });
      const r = parseTlogProof(t);
      expect(r.ok && r.tlogProof.proof.map(b64)).toEqual(proof.map(b64));
      expect(r.ok && formatTlogProof(r.tlogProof)).toBe(t);
    }
    expect(code(text(Array.from({ length: 65 }, (_, i) => hash(i))))).toBe('proof-too-long');
  });

  test('lines whose lengths still add up to 45 per line are refused', () => {
    const a = hash(1);
    const b = hash(2);
    // 43 + 45 characters: two lines, the right total, neither one a hash.
    expect(code(text([a.slice(1), a[0] + b]))).toBe('bad-proof-hash');
    expect(code(text([a + b[0], b.slice(1)]))).toBe('bad-proof-hash');
  });

  test('non-canonical, non-ASCII and wrong-size lines are refused with the line loop code', () => {
    const good = hash(7);
    expect(code(text([good, 'A'.repeat(44)]))).toBe('bad-proof-hash'); // 33 bytes
    expect(code(text(['A'.repeat(42) + '==']))).toBe('bad-proof-hash'); // 31 bytes
    expect(code(text([good, good.slice(0, 42) + 'B=']))).toBe('bad-proof-hash'); // unused bits set
    expect(code(text([good.slice(0, 43) + '\u2014']))).toBe('bad-proof-hash');
    expect(code(text([good.slice(0, 20) + '\u00e9' + good.slice(21)]))).toBe('bad-proof-hash');
    expect(code(`c2sp.org/tlog-proof@v1\nindex 3\n${good}\n${good}`)).toBe('missing-checkpoint');
    expect(code(`c2sp.org/tlog-proof@v1\nindex 3\n${good}\n\n`)).toBe('missing-checkpoint');
  });

  test('random proofs and one-character edits agree with the line loop (seed 1515)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20 }), fc.nat(), fc.integer({ min: 0, max: 127 }), (n, at, c) => {
        const lines = Array.from({ length: n }, (_, i) => hash(i * 13 + 1));
        const t = text(lines);
        const start = t.indexOf('index 3\n') + 8;
        const end = t.indexOf('\n\n', start - 1) + 1;
        const pos = start + (end > start ? at % (end - start) : 0);
        const edited = end > start ? t.slice(0, pos) + String.fromCharCode(c) + t.slice(pos + 1) : t;
        // The line loop's verdict, computed here line by line from the same rules.
        const canonical = (l: string): boolean => /^[A-Za-z0-9+/]{43}=$/.test(l) && b64(Buffer.from(l, 'base64')) === l;
        let want = 'ok';
        let p = start;
        for (;;) {
          const nl = edited.indexOf('\n', p);
          if (nl < 0) {
            want = 'missing-checkpoint';
            break;
          }
          const l = edited.slice(p, nl);
          p = nl + 1;
          if (l === '') {
            const rest = edited.slice(p);
            if (!(rest.endsWith('\n') && !rest.startsWith('\n'))) want = 'missing-checkpoint';
            break;
          }
          if (!canonical(l)) {
            want = 'bad-proof-hash';
            break;
          }
        }
        expect(code(edited)).toBe(want);
      }),
      { seed: 1515, numRuns: 400 },
    );
  });
});
