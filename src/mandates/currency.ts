/**
 * ISO 4217 minor-unit exponents, and the exact conversion of an AP2
 * `payment.budget` (a JSON number in major units) to integer minor units.
 * AP2's reference SDK computes `int(max * 100)`: wrong for JPY (exponent 0),
 * BHD (3), CLF (4), and lossy in binary floating point (`int(0.29 * 100)` is 28).
 * Here the number's own decimal text is scaled by 10^exponent; a budget with
 * more decimals than its currency has is refused, never rounded.
 */
import { refuse, type MandateResult } from './codes.js';

/** ISO 4217 (list one, 2026) exponents for the currencies Tally accepts; any other code is refused. */
const EXPONENT: Readonly<Record<string, number>> = {
  AED: 2, AUD: 2, BHD: 3, BRL: 2, CAD: 2, CHF: 2, CLF: 4, CLP: 0, CNY: 2, CZK: 2, DKK: 2, EUR: 2, GBP: 2, HKD: 2,
  HUF: 2, IDR: 2, ILS: 2, INR: 2, IQD: 3, ISK: 0, JOD: 3, JPY: 0, KRW: 0, KWD: 3, LYD: 3, MXN: 2, NOK: 2, NZD: 2,
  OMR: 3, PLN: 2, SAR: 2, SEK: 2, SGD: 2, THB: 2, TND: 3, TRY: 2, TWD: 2, UGX: 0, USD: 2, UYW: 4, VND: 0, XAF: 0,
  XOF: 0, ZAR: 2,
};

/** The minor-unit exponent of an ISO 4217 alphabetic code, if known. */
export function currencyExponent(code: string): number | undefined {
  return Object.hasOwn(EXPONENT, code) ? EXPONENT[code] : undefined;
}

/**
 * `max` major units of `currency` as an integer count of minor units, exactly.
 * The caller has already refused number text that is not exactly its value
 * (see exactNumbers in sdjwt.ts), so `String(max)` is the decimal the issuer wrote.
 */
export function minorUnits(max: number, currency: string): MandateResult<number> {
  const e = currencyExponent(currency);
  if (e === undefined) return refuse('currency-unknown', `${currency} is not in the ISO 4217 table`);
  const text = String(max);
  const m = /^(0|[1-9]\d*)(?:\.(\d+))?$/.exec(text);
  if (!m) return refuse('budget-inexact', `budget ${text} is not a non-negative decimal`);
  const frac = m[2] ?? '';
  if (frac.length > e) return refuse('budget-inexact', `budget ${text} ${currency} has ${frac.length} decimals; ${currency} has ${e}`);
  const minor = BigInt(m[1]!) * 10n ** BigInt(e) + BigInt(frac.padEnd(e, '0') || '0');
  if (minor > BigInt(Number.MAX_SAFE_INTEGER)) return refuse('budget-inexact', `budget ${text} ${currency} exceeds 2^53-1 minor units`);
  return { ok: true, value: Number(minor) };
}
