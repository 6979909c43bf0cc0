/**
 * TTL normalization: an ISO-8601 instant with an explicit zone, or epoch
 * milliseconds, to the one form `YYYY-MM-DDTHH:mm:ss.sssZ`.
 *
 * Calendar arithmetic is done here by hand (days-from-civil) so that years
 * 0000–0099 are not remapped the way `Date.UTC` does, and so impossible dates
 * (`2025-02-29`, `24:00`, `:60`) are rejected instead of rolled over.
 */

/** Earliest accepted instant: 0000-01-01T00:00:00.000Z, in epoch ms. */
export const MIN_TTL_MS = -62_167_219_200_000;
/** Latest accepted instant: 9999-12-31T23:59:59.999Z, in epoch ms. */
export const MAX_TTL_MS = 253_402_300_799_999;
/** Longest accepted TTL string (a full instant with millisecond fraction and offset is 29). */
export const MAX_TTL_STRING_LENGTH = 40;

/**
 * Wire grammar of a TTL string: date, `T`, hh:mm[:ss[.s{1,3}]], then `Z` or ±hh:mm.
 * The parser below additionally checks the calendar and the ranges.
 */
export const TTL_STRING_PATTERN =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\\.[0-9]{1,3})?)?(?:Z|[+-][0-9]{2}:[0-9]{2})$';
const TTL_RE = new RegExp(TTL_STRING_PATTERN);

/** Result of {@link normalizeTtl}. */
export type NormalizedTtlResult =
  | { readonly ok: true; readonly iso: string; readonly ms: number }
  | { readonly ok: false; readonly reason: string };

const DAY_MS = 86_400_000;

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return isLeap(y) ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

const num = (s: string | undefined): number => {
  let n = 0;
  for (let i = 0; i < (s ?? '').length; i++) n = n * 10 + ((s as string).charCodeAt(i) - 48);
  return n;
};

/**
 * Normalizes a TTL to `YYYY-MM-DDTHH:mm:ss.sssZ` plus its epoch milliseconds.
 * Accepts an integer number of epoch ms, or an ISO-8601 string with an explicit
 * zone (`Z` or `±hh:mm`; at most millisecond precision). Dates without a zone,
 * impossible dates and instants outside years 0000–9999 are rejected.
 *
 * @example
 * normalizeTtl('2030-01-01T02:00:00+02:00'); // { ok: true, iso: '2030-01-01T00:00:00.000Z', ms: 1893456000000 }
 * normalizeTtl(1893456000000);               // same instant
 * normalizeTtl('2030-01-01T00:00:00').ok;    // false (no zone)
 */
export function normalizeTtl(input: unknown): NormalizedTtlResult {
  let ms: number;
  if (typeof input === 'number') {
    if (!Number.isSafeInteger(input)) return { ok: false, reason: 'epoch milliseconds must be a safe integer' };
    ms = input;
  } else if (typeof input === 'string') {
    if (input.length > MAX_TTL_STRING_LENGTH) return { ok: false, reason: 'ttl string too long' };
    if (!TTL_RE.test(input)) return { ok: false, reason: 'ttl must be ISO-8601 with an explicit zone (Z or ±hh:mm) or epoch ms' };
    const s = input;
    const year = num(s.slice(0, 4));
    const month = num(s.slice(5, 7));
    const day = num(s.slice(8, 10));
    const hour = num(s.slice(11, 13));
    const minute = num(s.slice(14, 16));
    const rest = s.slice(16);
    const zoneAt = rest.search(/[Z+-]/);
    const timeTail = rest.slice(0, zoneAt); // "", ":ss" or ":ss.fff"
    const zone = rest.slice(zoneAt);
    const second = timeTail.length >= 3 ? num(timeTail.slice(1, 3)) : 0;
    const frac = timeTail.length > 4 ? timeTail.slice(4) : '';
    const milli = num(frac.padEnd(3, '0'));
    if (month < 1 || month > 12) return { ok: false, reason: 'month out of range' };
    if (day < 1 || day > daysInMonth(year, month)) return { ok: false, reason: 'day out of range for month' };
    if (hour > 23 || minute > 59 || second > 59) return { ok: false, reason: 'time of day out of range' };
    let offsetMin = 0;
    if (zone !== 'Z') {
      const oh = num(zone.slice(1, 3));
      const om = num(zone.slice(4, 6));
      if (oh > 23 || om > 59) return { ok: false, reason: 'zone offset out of range' };
      offsetMin = (zone.startsWith('-') ? -1 : 1) * (oh * 60 + om);
    }
    ms = daysFromCivil(year, month, day) * DAY_MS + ((hour * 60 + minute - offsetMin) * 60 + second) * 1000 + milli;
  } else {
    return { ok: false, reason: 'ttl must be a string or epoch milliseconds' };
  }
  if (ms < MIN_TTL_MS || ms > MAX_TTL_MS) return { ok: false, reason: 'ttl outside years 0000-9999' };
  return { ok: true, iso: new Date(ms).toISOString(), ms };
}

/**
 * THE edge rule of an intent's ttl (seed 000 §6: `now === ttl` is still valid):
 * the first instant, in epoch ms, at which an intent of ttl `ttlMs` is expired,
 * with the tolerated clock skew — `ttlMs + skewMs + 1`. An intent (and, under a
 * version-2 mandate, the ticket it gets) is live at `t` iff `t < intentEndMs(…)`.
 *
 * @example
 * intentEndMs(1893456000000);     // 1893456000001: valid at its ttl, expired 1 ms later
 * intentEndMs(1893456000000, 500); // 1893456000501
 */
export function intentEndMs(ttlMs: number, skewMs = 0): number {
  return ttlMs + skewMs + 1;
}

/**
 * Epoch milliseconds of a NORMALIZED ttl string (`YYYY-MM-DDTHH:mm:ss.sssZ`).
 *
 * @example
 * ttlToMs('2030-01-01T00:00:00.000Z'); // 1893456000000
 */
export function ttlToMs(normalizedIso: string): number {
  const r = normalizeTtl(normalizedIso);
  return r.ok ? r.ms : Number.NaN;
}
