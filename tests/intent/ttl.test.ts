import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { normalizeTtl } from '../../src/intent/index.js';
import { MAX_TTL_MS, MIN_TTL_MS } from '../../src/intent/ttl.js';

const iso = (v: unknown): string => {
  const r = normalizeTtl(v);
  if (!r.ok) throw new Error(`expected ok for ${String(v)}: ${r.reason}`);
  return r.iso;
};

describe('normalizeTtl', () => {
  test.each([
    ['2030-01-01T00:00:00Z', '2030-01-01T00:00:00.000Z'],
    ['2030-01-01T00:00Z', '2030-01-01T00:00:00.000Z'],
    ['2030-01-01T02:00:00+02:00', '2030-01-01T00:00:00.000Z'],
    ['2029-12-31T19:30:00-04:30', '2030-01-01T00:00:00.000Z'],
    ['2030-01-01T00:00:00.5Z', '2030-01-01T00:00:00.500Z'],
    ['2030-01-01T00:00:00.123Z', '2030-01-01T00:00:00.123Z'],
    ['2030-01-01T00:00:00-00:00', '2030-01-01T00:00:00.000Z'],
    ['2024-02-29T12:00:00Z', '2024-02-29T12:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['0050-06-15T00:00:00Z', '0050-06-15T00:00:00.000Z'], // not remapped to 1950 as Date.UTC would
    ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    [1_893_456_000_000, '2030-01-01T00:00:00.000Z'],
    [0, '1970-01-01T00:00:00.000Z'],
    [-1, '1969-12-31T23:59:59.999Z'],
  ])('%s → %s', (input, expected) => {
    expect(iso(input)).toBe(expected);
  });

  test.each([
    ['2030-01-01T00:00:00', 'no zone'],
    ['2030-01-01', 'date only'],
    ['2030-01-01 00:00:00Z', 'space separator'],
    ['2030-01-01T00:00:00z', 'lowercase zone'],
    ['2030-01-01T00:00:00+0200', 'offset without colon'],
    ['2030-01-01T00:00:00.1234Z', 'sub-millisecond fraction'],
    ['2025-02-29T00:00:00Z', 'not a leap year'],
    ['1900-02-29T00:00:00Z', 'century non-leap'],
    ['2030-04-31T00:00:00Z', 'April 31st'],
    ['2030-13-01T00:00:00Z', 'month 13'],
    ['2030-00-10T00:00:00Z', 'month 0'],
    ['2030-01-00T00:00:00Z', 'day 0'],
    ['2030-01-01T24:00:00Z', 'hour 24'],
    ['2030-01-01T23:60:00Z', 'minute 60'],
    ['2030-01-01T23:59:60Z', 'leap second'],
    ['2030-01-01T00:00:00+24:00', 'offset hour 24'],
    ['9999-12-31T23:59:59-01:00', 'past year 9999'],
    ['0000-01-01T00:00:00+01:00', 'before year 0'],
    ['+002030-01-01T00:00:00Z', 'expanded year'],
    ['1893456000000', 'epoch ms as string'],
    [1.5, 'fractional epoch ms'],
    [Number.MAX_SAFE_INTEGER, 'epoch ms out of range'],
    [MAX_TTL_MS + 1, 'epoch ms one past the range'],
    [MIN_TTL_MS - 1, 'epoch ms one before the range'],
    [NaN, 'NaN'],
    [null, 'null'],
    [`2030-01-01T00:00:00Z${' '.repeat(100)}`, 'too long'],
  ])('rejects %s (%s)', (input, _why) => {
    expect(normalizeTtl(input).ok).toBe(false);
  });

  test('agrees with Date for every in-range instant and zone (seed 0x7711)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(9998, 11, 31) }),
        fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }),
        (ms, offsetMin) => {
          // Spell `ms` in the zone `offsetMin` by hand, then normalize it back.
          const local = new Date(ms + offsetMin * 60_000).toISOString().slice(0, 23);
          const sign = offsetMin < 0 ? '-' : '+';
          const abs = Math.abs(offsetMin);
          const zone = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
          const r = normalizeTtl(`${local}${zone}`);
          return r.ok && r.ms === ms && r.iso === new Date(ms).toISOString() && normalizeTtl(ms).ok && iso(r.iso) === r.iso;
        },
      ),
      { seed: 0x7711, numRuns: 1000 },
    );
  });
});
