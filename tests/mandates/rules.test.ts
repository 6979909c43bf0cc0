/**
 * The pure rules of src/mandates as properties (printed seed): exact budget
 * conversion against BigInt decimal arithmetic, exact-number text, UTC period
 * buckets against Date's own calendar, and fail-closed constraint parsing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bucketOf, currencyExponent, exactNumbers, minorUnits, parseConstraints } from '../../src/mandates/index.js';

const SEED = 0xa92;
const runs = { seed: SEED, numRuns: 400 };
const REF = { type: 'payment.reference', conditional_transaction_id: 'x' };

describe(`AP2 rules (seed ${SEED.toString(16)})`, () => {
  it('a budget written with at most the currency\'s decimals converts to exactly its minor units', () => {
    fc.assert(fc.property(fc.constantFrom('USD', 'JPY', 'BHD', 'CLF', 'EUR'), fc.bigInt({ min: 0n, max: 10n ** 15n }), (cur, minor) => {
      const e = currencyExponent(cur)!;
      const s = minor.toString().padStart(e + 1, '0');
      const text = e === 0 ? s : `${s.slice(0, -e)}.${s.slice(-e)}`;
      fc.pre(exactNumbers(text));
      const r = minorUnits(Number(text), cur);
      expect(r).toEqual({ ok: true, value: Number(minor) });
    }), runs);
  });

  it('one decimal more than the currency has is refused, never rounded', () => {
    fc.assert(fc.property(fc.constantFrom('USD', 'JPY', 'BHD'), fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 1, max: 9 }), (cur, whole, digit) => {
      const e = currencyExponent(cur)!;
      const text = `${whole}.${'0'.repeat(e)}${digit}`;
      const r = minorUnits(Number(text), cur);
      expect(r.ok ? 'accepted' : r.code).toBe('budget-inexact');
    }), runs);
    // The reference SDK's int(max * 100): 0.29 USD would be 28 cents.
    expect(minorUnits(0.29, 'USD')).toEqual({ ok: true, value: 29 });
    expect(minorUnits(1000, 'JPY')).toEqual({ ok: true, value: 1000 });
  });

  it('number text must be exactly its value', () => {
    for (const t of ['150.0', '10.10', '0.29', '-3', '9007199254740991']) expect(exactNumbers(`{"a":${t}}`), t).toBe(true);
    for (const t of ['1e2', '1E-2', '10.100000000000000001', '9007199254740993', '0.30000000000000004441']) expect(exactNumbers(`{"a":${t}}`), t).toBe(false);
    expect(exactNumbers('{"a":"1e2"}')).toBe(true); // inside a string it is text
  });

  it('UTC buckets: equal exactly when Date\'s UTC calendar says the same period', () => {
    const t = fc.integer({ min: 0, max: 4_102_444_800 });
    fc.assert(fc.property(t, t, (a, b) => {
      const da = new Date(a * 1000), db = new Date(b * 1000);
      const same = (f: (d: Date) => string) => f(da) === f(db);
      expect(bucketOf('DAILY', a) === bucketOf('DAILY', b)).toBe(same((d) => d.toISOString().slice(0, 10)));
      expect(bucketOf('MONTHLY', a) === bucketOf('MONTHLY', b)).toBe(same((d) => d.toISOString().slice(0, 7)));
      expect(bucketOf('QUARTERLY', a) === bucketOf('QUARTERLY', b)).toBe(same((d) => `${d.getUTCFullYear()}-${Math.floor(d.getUTCMonth() / 3)}`));
      expect(bucketOf('ANNUALLY', a) === bucketOf('ANNUALLY', b)).toBe(same((d) => String(d.getUTCFullYear())));
      const monday = (d: Date) => { const m = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - ((d.getUTCDay() + 6) % 7))); return m.toISOString().slice(0, 10); };
      expect(bucketOf('WEEKLY', a) === bucketOf('WEEKLY', b)).toBe(same(monday));
      expect(bucketOf('WEEKLY', a)).toBe(`week-of-${monday(da)}`);
      expect(bucketOf('ON_DEMAND', a)).toBe(bucketOf('ON_DEMAND', b));
    }), runs);
  });

  it('any constraint type outside the known set fails closed', () => {
    fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 30 }), (type) => {
      fc.pre(!['payment.allowed_payees', 'payment.amount_range', 'payment.budget', 'payment.agent_recurrence', 'payment.execution_date', 'payment.reference', 'payment.allowed_payment_instruments', 'payment.allowed_pisps'].includes(type));
      const r = parseConstraints([REF, { type }], 'payment');
      expect(r.ok ? 'accepted' : r.code).toBe('constraint-unknown');
    }), runs);
  });
});
