import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decAdd, decCmp, decMul, decSub, isCanonicalDecimal } from '../../src/referee/index.js';

/** An independent reading: a decimal as a fraction n / 10^18·2 scaled to 36 places (every test value fits). */
const SCALE = 36n;
function naive(d: string): bigint {
  const neg = d.startsWith('-');
  const [i, f = ''] = (neg ? d.slice(1) : d).split('.');
  const v = BigInt(i!) * 10n ** SCALE + BigInt((f + '0'.repeat(Number(SCALE))).slice(0, Number(SCALE)) || '0');
  return neg ? -v : v;
}

const decimal = fc
  .tuple(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.integer({ min: 0, max: 18 }))
  .map(([m, s]) => {
    const neg = m < 0n;
    let digits = (neg ? -m : m).toString().padStart(s + 1, '0');
    if (s > 0) digits = `${digits.slice(0, -s)}.${digits.slice(-s)}`.replace(/\.?0+$/, '');
    return neg && digits !== '0' ? `-${digits}` : digits;
  });

describe('exact decimals', () => {
  it('add, sub, mul and cmp agree with an independent fixed-point reading and stay canonical (seed 0xdec1)', () => {
    fc.assert(
      fc.property(decimal, decimal, (a, b) => {
        expect(isCanonicalDecimal(a) && isCanonicalDecimal(b)).toBe(true);
        const sum = decAdd(a, b);
        const diff = decSub(a, b);
        expect(isCanonicalDecimal(sum) && isCanonicalDecimal(diff)).toBe(true);
        expect(naive(sum)).toBe(naive(a) + naive(b));
        expect(naive(diff)).toBe(naive(a) - naive(b));
        expect(decCmp(a, b)).toBe(naive(a) < naive(b) ? -1 : naive(a) > naive(b) ? 1 : 0);
        const product = decMul(a, b);
        expect(isCanonicalDecimal(product)).toBe(true);
        expect(naive(product)).toBe((naive(a) * naive(b)) / 10n ** SCALE);
      }),
      { seed: 0xdec1, numRuns: 400 },
    );
  });

  it('examples and refusals', () => {
    expect(decAdd('0.1', '0.2')).toBe('0.3');
    expect(decSub('1', '1')).toBe('0');
    expect(decMul('2.5', '0.5')).toBe('1.25');
    expect(decSub('0.5', '1.25')).toBe('-0.75');
    for (const bad of ['1.0', '01', '-0', '.5', '1e3', '', ' 1']) expect(() => decAdd(bad, '1'), bad).toThrow(/canonical decimal/);
  });
});
