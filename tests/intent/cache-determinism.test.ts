import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSignerCache, signIntent, validateIntent } from '../../src/intent/index.js';
import { ANVIL0_KEY, baseOptions, openInput } from './helpers.js';

describe('rulings do not depend on the signer cache', () => {
  it('any one-character change of a signature gets the same result cold and warm (seed 0xcace)', async () => {
    const good = await signIntent(openInput, ANVIL0_KEY);
    const warm = createSignerCache();
    expect((await validateIntent(good, baseOptions({ signerCache: warm }))).ok).toBe(true);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 131 }), fc.constantFrom(...'0123456789abcdef'), async (pos, ch) => {
        const sig = good.signature.slice(0, pos) + ch + good.signature.slice(pos + 1);
        const input = { ...good, signature: sig };
        const cold = await validateIntent(input, baseOptions());
        const hot = await validateIntent(input, baseOptions({ signerCache: warm }));
        expect(hot).toEqual(cold);
      }),
      { seed: 0xcace, numRuns: 300 },
    );
  });
});
