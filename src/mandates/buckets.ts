/**
 * Period buckets for `payment.agent_recurrence`, deterministic and in UTC
 * (PROTOCOL.md §16.5): two times are in one period exactly when their bucket
 * names are equal. Weeks start Monday 00:00 UTC; BIWEEKLY pairs weeks counted
 * from Monday 1969-12-29; quarters start January, April, July, October.
 */
export const FREQUENCIES = ['ON_DEMAND', 'DAILY', 'WEEKLY', 'BIWEEKLY', 'MONTHLY', 'QUARTERLY', 'ANNUALLY'] as const;
export type Frequency = (typeof FREQUENCIES)[number];

const day = (d: number): string => new Date(d * 86_400_000).toISOString().slice(0, 10);

/** The bucket name of Unix second `s` under `f`. */
export function bucketOf(f: Frequency, s: number): string {
  const d = Math.floor(s / 86_400);
  const iso = day(d);
  switch (f) {
    case 'ON_DEMAND': return 'all';
    case 'DAILY': return iso;
    // Day 0 (1970-01-01) was a Thursday: Monday-based week index is floor((d + 3) / 7).
    case 'WEEKLY': return `week-of-${day(Math.floor((d + 3) / 7) * 7 - 3)}`;
    case 'BIWEEKLY': return `fortnight-of-${day(Math.floor((d + 3) / 14) * 14 - 3)}`;
    case 'MONTHLY': return iso.slice(0, 7);
    case 'QUARTERLY': return `${iso.slice(0, 4)}-Q${Math.floor((Number(iso.slice(5, 7)) - 1) / 3) + 1}`;
    case 'ANNUALLY': return iso.slice(0, 4);
  }
}
