import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalDecimal } from '../../src/intent/index.js';
import { decimalShape, isUnitInterval } from '../../src/intent/decimal.js';

/** Independent reference: BigInt mantissa × 10^exponent, printed by BigInt division. */
function naiveCanonical(literal: string): string | null {
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/.exec(literal);
  if (m === null) return null;
  const [, sign = '', int = '', frac = '', exp = '0'] = m;
  if (int === '' && frac === '') return null;
  const mantissa = BigInt(`${int}${frac}` || '0');
  const e = BigInt(exp) - BigInt(frac.length);
  if (mantissa === 0n) return '0';
  let body: string;
  if (e >= 0n) body = (mantissa * 10n ** e).toString();
  else {
    const scale = 10n ** -e;
    const ip = mantissa / scale;
    const fp = (mantissa % scale).toString().padStart(Number(-e), '0').replace(/0+$/, '');
    body = fp === '' ? ip.toString() : `${ip}.${fp}`;
  }
  return sign === '-' ? `-${body}` : body;
}

const ok = (v: unknown): string => {
  const r = canonicalDecimal(v);
  if (!r.ok) throw new Error(`expected ok for ${String(v)}: ${r.reason}`);
  return r.value;
};

describe('canonicalDecimal', () => {
  test.each([
    [1, '1'],
    [1.0, '1'],
    ['1.000', '1'],
    ['1.500', '1.5'],
    [0.5, '0.5'],
    ['.5', '0.5'],
    ['1e3', '1000'],
    ['1E3', '1000'],
    ['-0.0', '0'],
    [-0, '0'],
    ['+.5e-1', '0.05'],
    ['00012.3400', '12.34'],
    ['1.', '1'],
    [1e-7, '0.0000001'],
    [1e21, '1000000000000000000000'],
    [0.1 + 0.2, '0.30000000000000004'],
    ['-12.50e1', '-125'],
    ['123e-5', '0.00123'],
    ['0e100', '0'],
    [`0.${'0'.repeat(79)}1`, `0.${'0'.repeat(79)}1`],
    ['1'.repeat(80), '1'.repeat(80)],
  ])('%s → %s', (input, expected) => {
    expect(ok(input)).toBe(expected);
  });

  test.each([
    NaN,
    Infinity,
    -Infinity,
    '',
    '.',
    '-',
    '+',
    '1e',
    'e1',
    '.e1',
    '0x10',
    ' 1',
    '1 ',
    '1_000',
    '١',
    'Infinity',
    'NaN',
    '1.2.3',
    '--1',
    '1e+-1',
    '1e1.5',
    '1'.repeat(81), // 81 integer digits
    `0.${'0'.repeat(80)}1`, // 81 fraction digits (and > 80 chars is fine, ≤ 100)
    '1'.repeat(101), // literal too long
    '1e101',
    '1e-101',
    1e101,
    5e-324,
    null,
    undefined,
    10n,
    {},
    ['1'],
  ])('rejects %s', (input) => {
    expect(canonicalDecimal(input).ok).toBe(false);
  });

  test('exponent bombs and huge literals are rejected (how fast: npm run bench, section hostile)', () => {
    const bombs = ['1e8000000', '1e-8000000', '0e99999999999999999999', `1e${'9'.repeat(90)}`, '9'.repeat(5_000_000), `1e${'9'.repeat(5_000_000)}`];
    for (const b of bombs) expect(canonicalDecimal(b).ok).toBe(false);
    // A zero-padded small exponent within the literal bound is fine.
    expect(ok(`1e${'0'.repeat(90)}3`)).toBe('1000');
  });

  const literal = fc
    .tuple(
      fc.constantFrom('', '+', '-'),
      fc.stringMatching(/^[0-9]{0,20}$/),
      fc.option(fc.stringMatching(/^[0-9]{0,20}$/), { nil: undefined }),
      fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 40 }), fc.nat(3)), { nil: undefined }),
    )
    .map(([sign, int, frac, exp]) => {
      const e = exp === undefined ? '' : `${exp[0]}${exp[1]}${'0'.repeat(exp[3])}${exp[2]}`;
      return `${sign}${int}${frac === undefined ? '' : `.${frac}`}${e}`;
    });

  test('agrees with an independent BigInt implementation (seed 0xdec1)', () => {
    fc.assert(
      fc.property(literal, (lit) => {
        const ref = naiveCanonical(lit);
        const got = canonicalDecimal(lit);
        if (ref === null) return !got.ok;
        return got.ok && got.value === ref;
      }),
      { seed: 0xdec1, numRuns: 2000 },
    );
  });

  test('is idempotent (seed 0xdec2)', () => {
    fc.assert(
      fc.property(literal, (lit) => {
        const r = canonicalDecimal(lit);
        return !r.ok || (canonicalDecimal(r.value).ok && ok(r.value) === r.value);
      }),
      { seed: 0xdec2, numRuns: 2000 },
    );
  });

  test('equivalent spellings normalize equally (seed 0xdec3)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('', '-'),
        fc.stringMatching(/^[1-9][0-9]{0,15}$/),
        fc.integer({ min: -20, max: 20 }),
        fc.nat(5),
        fc.nat(5),
        fc.integer({ min: -10, max: 10 }),
        (sign, digits, exp10, leadZeros, trailZeros, shift) => {
          // value = sign digits × 10^exp10
          const base = `${sign}${digits}e${exp10}`;
          const spelled = [
            base,
            `${sign}${'0'.repeat(leadZeros)}${digits}${exp10 === 0 ? '' : `E${exp10 > 0 ? '+' : ''}${exp10}`}`,
            `${sign}${digits}.${'0'.repeat(trailZeros)}e${exp10}`,
            `${sign}${digits}${'0'.repeat(Math.max(shift, 0))}e${exp10 - Math.max(shift, 0)}`,
            `${sign}0.${digits}e${exp10 + digits.length}`,
          ];
          const values = spelled.map(ok);
          return values.every((v) => v === values[0]);
        },
      ),
      { seed: 0xdec3, numRuns: 1000 },
    );
  });

  test('JS numbers keep their exact double value (seed 0xdec4)', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e60, max: 1e60 }), (x) => {
        const r = canonicalDecimal(x);
        if (Math.abs(x) < 1e-60 && x !== 0) return true; // may exceed the 80 fraction-digit cap
        return r.ok && Number(r.value) === x && !/e/i.test(r.value) && (x !== 0 || r.value === '0');
      }),
      { seed: 0xdec4, numRuns: 2000 },
    );
  });
});

describe('decimal shape helpers', () => {
  test.each([
    ['0', { negative: false, zero: true, integerDigits: 0, fractionDigits: 0 }],
    ['0.005', { negative: false, zero: false, integerDigits: 0, fractionDigits: 3 }],
    ['-12.5', { negative: true, zero: false, integerDigits: 2, fractionDigits: 1 }],
    ['1000', { negative: false, zero: false, integerDigits: 4, fractionDigits: 0 }],
  ])('%s', (value, shape) => {
    expect(decimalShape(value)).toEqual(shape);
  });

  test.each([
    ['0', true],
    ['1', true],
    ['0.999999', true],
    ['1.0000000000000001', false],
    ['-0.1', false],
    ['2', false],
    ['10', false],
  ])('isUnitInterval(%s) = %s', (value, expected) => {
    expect(isUnitInterval(value)).toBe(expected);
  });
});
