/**
 * The mandate's tools section (docs/PROTOCOL.md §18.3): parsed strictly
 * (unknown members, bad bounds and wrong types refuse), and each argument
 * rule checked as documented — decimals compared as decimals, never repaired
 * ("1.50" is not read as 1.5), enums by strict equality. A fast-check
 * property compares the decimal cap with BigInt arithmetic on scaled values.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkArguments, parseToolPolicy, ToolPolicyProblem } from '../../src/referee/tools.js';

const rule = (args: Record<string, unknown>, extra: Record<string, unknown> = {}) => parseToolPolicy({ allow: { t: { args, ...extra } } }).allow.get('t')!;

describe('parseToolPolicy', () => {
  it.each([
    [{ allow: {}, extra: 1 }, /unknown member "extra"/],
    [{ allow: { t: { limit: 1 } } }, /unknown member "limit"/],
    [{ allow: { t: { args: { a: { type: 'integer', pattern: 'x' } } } } }, /unknown member "pattern"/],
    [{ allow: { t: { args: { a: { type: 'float' } } } } }, /type must be/],
    [{ allow: { t: { args: { a: {} } } } }, /type or an enum/],
    [{ allow: { t: { args: { a: { type: 'decimal', maximum: 10 } } } } }, /canonical decimal string/],
    [{ allow: { t: { args: { a: { type: 'decimal', maximum: '1.50' } } } } }, /canonical decimal string/],
    [{ allow: { t: { args: { a: { type: 'integer', minimum: 5, maximum: 4 } } } } }, /minimum is above/],
    [{ allow: { t: { args: { a: { type: 'string', minimum: 1 } } } } }, /needs "type": "integer" or "decimal"/],
    [{ allow: { t: { args: { a: { type: 'integer', max_length: 3 } } } } }, /max_length needs "type": "string"/],
    [{ allow: { t: { args: { a: { type: 'integer', enum: ['x'] } } } } }, /not of the argument's type/],
    [{ allow: { t: { args: { a: { enum: ['x', 'x'] } } } } }, /duplicate/],
    [{ allow: { t: { rate: { max: 0, window_ms: 60_000 } } } }, /max must be an integer/],
    [{ allow: { 'has space': {} } }, /printable ASCII/],
    [{ allow: [] }, /allow must be an object/],
  ])('refuses %j', (v, re) => {
    expect(() => parseToolPolicy(v)).toThrow(ToolPolicyProblem);
    expect(() => parseToolPolicy(v)).toThrow(re);
  });
});

describe('checkArguments', () => {
  it('decimal caps compare as decimals and refuse non-canonical figures', () => {
    const r = rule({ amount: { type: 'decimal', minimum: '0.01', maximum: '10' } });
    expect(checkArguments(r, { amount: '9.99' })).toBeUndefined();
    expect(checkArguments(r, { amount: '10' })).toBeUndefined();
    expect(checkArguments(r, { amount: 10 })).toBeUndefined();
    expect(checkArguments(r, { amount: '10.000000000000000001' })).toMatch(/at most 10/);
    expect(checkArguments(r, { amount: '0.001' })).toMatch(/at least 0.01/);
    expect(checkArguments(r, { amount: '1.50' })).toMatch(/canonical decimal/);
    expect(checkArguments(r, { amount: '1e1' })).toMatch(/canonical decimal/);
    expect(checkArguments(r, { amount: true })).toMatch(/canonical decimal/);
  });

  it('enums, strings, booleans, required and additional', () => {
    const r = rule({ payee: { enum: ['acme', 7] }, memo: { type: 'string', max_length: 4 }, urgent: { type: 'boolean' } }, { required: ['payee'], additional: false });
    expect(checkArguments(r, { payee: 'acme', memo: 'rent', urgent: true })).toBeUndefined();
    expect(checkArguments(r, { payee: 7 })).toBeUndefined();
    expect(checkArguments(r, { payee: '7' })).toMatch(/must be one of/);
    expect(checkArguments(r, { payee: 'acme', memo: 'rents' })).toMatch(/at most 4 characters/);
    expect(checkArguments(r, { payee: 'acme', urgent: 'yes' })).toMatch(/true or false/);
    expect(checkArguments(r, { memo: 'x' })).toMatch(/"payee" is required/);
    expect(checkArguments(r, { payee: 'acme', other: 1 })).toMatch(/"other" is not allowed/);
    expect(checkArguments(rule({ a: { type: 'integer' } }), { b: 1 })).toBeUndefined();
  });

  it('property: a decimal cap admits exactly the values at most the cap (BigInt reference)', () => {
    const seed = Number(process.env['FC_SEED'] ?? Date.now() % 2 ** 31);
    console.log(`fast-check seed ${seed}`);
    const dec = fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.integer({ min: 0, max: 6 })).map(([n, scale]) => {
      const s = n.toString().padStart(scale + 1, '0');
      const int = s.slice(0, s.length - scale).replace(/^0+(?=\d)/, '');
      const frac = s.slice(s.length - scale).replace(/0+$/, '');
      return frac === '' ? int : `${int}.${frac}`;
    });
    const scaled = (d: string) => {
      const [i, f = ''] = d.split('.');
      return BigInt(i! + f.padEnd(6, '0'));
    };
    fc.assert(
      fc.property(dec, dec, (cap, v) => {
        const r = rule({ x: { type: 'decimal', maximum: cap } });
        expect(checkArguments(r, { x: v }) === undefined).toBe(scaled(v) <= scaled(cap));
      }),
      { seed, numRuns: 500 },
    );
  });
});
