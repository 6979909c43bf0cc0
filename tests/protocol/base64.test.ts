import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromBase64, toBase64 } from '../../src/protocol/index.js';

describe('strict base64', () => {
  it('agrees with Buffer and round-trips (seed 0xb64)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (b) => {
        const s = toBase64(b);
        expect(s).toBe(Buffer.from(b).toString('base64'));
        expect(fromBase64(s)).toEqual(b);
      }),
      { seed: 0xb64, numRuns: 500 },
    );
  });

  it.each(['A', 'AB', 'ABC', 'AB=C', 'A===', '====', 'AB==AB==', 'QQ=', 'QR==', 'QUI=QUI=', 'QUJ=', 'ab$d', 'é123'])('rejects %j', (s) => {
    expect(fromBase64(s)).toBeUndefined();
  });

  it('accepts the empty string and canonical padding', () => {
    expect(fromBase64('')).toEqual(new Uint8Array());
    expect(fromBase64('QQ==')).toEqual(new Uint8Array([65]));
    expect(fromBase64('QUI=')).toEqual(new Uint8Array([65, 66]));
  });
});
