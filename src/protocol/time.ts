/**
 * Epoch milliseconds as ISO 8601 UTC text for messages people read
 * (`2030-01-01T09:30:00Z`). Pure arithmetic (the protocol layer reads no
 * clock and uses no Date): Howard Hinnant's days-to-civil algorithm.
 */

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/**
 * `ms` (an integer count of milliseconds since 1970-01-01T00:00:00Z) as
 * `YYYY-MM-DDTHH:MM:SSZ`, with `.mmm` only when the milliseconds are not zero.
 * Values that are not safe integers, or outside years 0000–9999, are printed
 * as the plain number followed by " ms".
 */
export function isoTime(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < -62_167_219_200_000 || ms > 253_402_300_799_999) return `${ms} ms`;
  const days = Math.floor(ms / 86_400_000);
  let rest = ms - days * 86_400_000;
  const hh = Math.floor(rest / 3_600_000);
  rest -= hh * 3_600_000;
  const mm = Math.floor(rest / 60_000);
  rest -= mm * 60_000;
  const ss = Math.floor(rest / 1000);
  const milli = rest - ss * 1000;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}T${pad(hh, 2)}:${pad(mm, 2)}:${pad(ss, 2)}${milli === 0 ? '' : `.${pad(milli, 3)}`}Z`;
}
