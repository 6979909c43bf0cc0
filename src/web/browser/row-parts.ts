/**
 * A loaded day's rows built in parts, by several rows workers at once, each
 * from a run of whole lines (row-feed.ts): joined here into the rows one pass
 * over the whole day gives. The one thing a part cannot know is the time of
 * the frame that the turns at its start answer (it is in the part before):
 * those turns take the time of the last frame of the rows before them.
 */
import { frameTimeOf, type Row } from './rows.js';

/** Parts a loaded day's rows are built in (one rows worker each), where the browser reports the cores (at most 4). */
export const ROW_PARTS = Math.min(4, Math.max(1, (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 1));

/** Where each part after the first starts: the index of its first line and that line's byte offset (increasing). */
export interface RowSplit {
  readonly index: number;
  readonly offset: number;
}

/** Days below this many verified entries are built in one part (a worker's start would cost more than it saves). */
const SPLIT_FROM = 2048;

/** Splits for `parts` parts of a day of `count` verified entries whose line `i` starts at `offsets[i]` (none for small days). */
export function rowSplits(offsets: readonly number[], count: number, parts: number): RowSplit[] {
  const splits: RowSplit[] = [];
  if (count < SPLIT_FROM || parts < 2) return splits;
  for (let k = 1; k < parts; k++) {
    const index = Math.floor((count * k) / parts);
    splits.push({ index, offset: offsets[index]! });
  }
  return splits;
}

/** How many of the first `count` lines part `k` holds, for parts starting at `starts`. */
export function partLength(starts: readonly number[], k: number, count: number): number {
  return Math.max(0, Math.min(count, starts[k + 1] ?? count) - starts[k]!);
}

/**
 * The rows of the first `count` lines from `parts[k]` (the rows of the lines
 * from `starts[k]` on, in order, each part built with no frame time before
 * it): lines a part did not reach are bare `unverified` rows (a rows worker
 * that failed), and a turn without a time (one before its part's first frame)
 * takes the last frame time of the rows before, as one pass gives it.
 */
export function joinRowParts(parts: readonly (readonly Row[])[], starts: readonly number[], count: number): Row[] {
  const rows: Row[] = [];
  let frameTime: number | undefined;
  for (let k = 0; k < parts.length; k++) {
    const part = parts[k]!;
    const n = partLength(starts, k, count);
    for (let j = 0; j < n; j++) {
      const r = part[j] ?? { i: starts[k]! + j, kind: 'unverified', hash: '', bytes: 0 };
      if (r.kind === 'turn' && r.time === undefined && frameTime !== undefined) r.time = frameTime;
      frameTime = frameTimeOf(r) ?? frameTime;
      rows.push(r);
    }
  }
  return rows;
}
