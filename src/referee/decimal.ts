/**
 * Exact arithmetic on canonical decimal strings (the spelling of every Intent
 * numeric and every quota figure): `bigint` mantissa and a power-of-ten scale,
 * never a float. Inputs MUST be canonical (see `canonicalDecimal`); outputs are.
 */
import { TallyError } from '../protocol/errors.js';

/** A decimal as `mantissa × 10^-scale`. */
interface Fixed {
  readonly m: bigint;
  readonly s: number;
}

const CANONICAL = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]*[1-9])?$/;

function parse(d: string): Fixed {
  if (!CANONICAL.test(d) || d === '-0') throw new TallyError('TALLY_REFEREE_DECIMAL', 'Not a canonical decimal string.', { details: JSON.stringify(d.slice(0, 60)) });
  const neg = d.startsWith('-');
  const body = neg ? d.slice(1) : d;
  const dot = body.indexOf('.');
  const digits = dot === -1 ? body : body.slice(0, dot) + body.slice(dot + 1);
  const m = BigInt(digits);
  return { m: neg ? -m : m, s: dot === -1 ? 0 : body.length - dot - 1 };
}

function align(a: Fixed, b: Fixed): [bigint, bigint, number] {
  const s = Math.max(a.s, b.s);
  return [a.m * 10n ** BigInt(s - a.s), b.m * 10n ** BigInt(s - b.s), s];
}

function format(f: Fixed): string {
  let { m, s } = f;
  while (s > 0 && m % 10n === 0n) {
    m /= 10n;
    s--;
  }
  const neg = m < 0n;
  let digits = (neg ? -m : m).toString();
  if (s > 0) {
    digits = digits.padStart(s + 1, '0');
    digits = `${digits.slice(0, digits.length - s)}.${digits.slice(digits.length - s)}`;
  }
  return neg && m !== 0n ? `-${digits}` : digits;
}

/** True for a canonical decimal string (`"0"`, `"1.5"`, `"-2"`; not `"1.0"`, `"01"`, `"-0"`). */
export function isCanonicalDecimal(d: unknown): d is string {
  return typeof d === 'string' && CANONICAL.test(d) && d !== '-0';
}

/**
 * `a + b`.
 *
 * @example
 * decAdd('1.5', '0.25'); // '1.75'
 */
export function decAdd(a: string, b: string): string {
  const [x, y, s] = align(parse(a), parse(b));
  return format({ m: x + y, s });
}

/** `a − b`. */
export function decSub(a: string, b: string): string {
  const [x, y, s] = align(parse(a), parse(b));
  return format({ m: x - y, s });
}

/** `a × b`. */
export function decMul(a: string, b: string): string {
  const x = parse(a);
  const y = parse(b);
  return format({ m: x.m * y.m, s: x.s + y.s });
}

/**
 * Compares: −1, 0 or 1.
 *
 * @example
 * decCmp('10', '9.99'); // 1
 */
export function decCmp(a: string, b: string): -1 | 0 | 1 {
  const [x, y] = align(parse(a), parse(b));
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Digits before the point (a lone leading `0` not counted) and after it. */
export function decDigits(d: string): { readonly integer: number; readonly fraction: number } {
  const body = d.startsWith('-') ? d.slice(1) : d;
  const dot = body.indexOf('.');
  const int = dot === -1 ? body : body.slice(0, dot);
  return { integer: int === '0' ? 0 : int.length, fraction: dot === -1 ? 0 : body.length - dot - 1 };
}
