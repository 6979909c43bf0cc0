/**
 * The verifier reads the log itself (docs/PROTOCOL.md §15.10): given a day's
 * verified log binding (§15.5) and the log's tlog-tiles (§15.4), it checks
 * that the binding's log checkpoint is consistent with the log served (the
 * tree of the leaves read has the binding's root at its size, and the
 * served checkpoint's root at the served size), then scans every checkpoint
 * leaf of the day's origin: one with the day's size and another root, one
 * past the day's seal, or one whose root is not the day's own tree at its
 * size is refused, naming both leaves and both roots — the rule
 * {@link checkpointConflict} / {@link checkpointAgainstTree} the monitor
 * applies too. Bounded: at most `maxLeaves` leaves are read.
 */
import { checkpointAgainstTree, checkpointConflict, parseEngineLogLeaf, type CheckpointConflict, type CheckpointLeaf, type IndexedCheckpointLeaf } from '../protocol/index.js';
import type { NoteVerifier } from '../receipt/note/types.js';
import { LogReader, openLogCheckpoint, type HeldLogCheckpoint } from './reader.js';
import type { LogSource } from './source.js';

/** Every code {@link checkDayInLog} refuses with. */
export const DAY_IN_LOG_CODES = [
  /** The log (its checkpoint or entry bundles) could not be read: nothing is concluded. */
  'TALLY_LOG_UNAVAILABLE',
  /** The served log checkpoint does not open with the pinned log key named as its origin, or its bytes are not the log's. */
  'TALLY_LOG_UNSIGNED',
  /** The served log is not consistent with the binding's log checkpoint (smaller, or another tree at its size). */
  'TALLY_LOG_FORK',
  /** The log is larger than `maxLeaves`. */
  'TALLY_LOG_TOO_LARGE',
  'TALLY_LOG_EQUIVOCATION',
  'TALLY_LOG_INCONSISTENT',
  'TALLY_LOG_SESSION_MISMATCH',
] as const;
/** A code of {@link DAY_IN_LOG_CODES}. */
export type DayInLogCode = (typeof DAY_IN_LOG_CODES)[number];

/** Options of {@link checkDayInLog}. */
export interface CheckDayInLogOptions {
  readonly source: LogSource;
  readonly logVerifiers: readonly (NoteVerifier | string)[];
  /** The day's verified binding: its leaf's index, the leaf, and the log checkpoint it is included in. */
  readonly binding: { readonly index: number; readonly leaf: CheckpointLeaf; readonly log: { readonly size: number; readonly root: string } };
  /** The root of the day's first `size` entries (64 lowercase hex), or `undefined` beyond the day read. */
  readonly rootAt?: (size: number) => string | undefined;
  /** Most leaves read (default 2^22). */
  readonly maxLeaves?: number;
  /** Called with the sizes of the day's origin's other checkpoint leaves before `rootAt` is asked (to read the day's tree once). */
  readonly prepare?: (sizes: readonly number[]) => Promise<void>;
}

/** Outcome of {@link checkDayInLog}. */
export type CheckDayInLogResult =
  | { readonly ok: true; readonly log: HeldLogCheckpoint; readonly leaves: number; readonly sameOrigin: readonly number[] }
  | { readonly ok: false; readonly stage: 'log-read'; readonly code: DayInLogCode; readonly message: string; readonly leaves?: readonly number[]; readonly roots?: readonly string[] };

function refuse(code: DayInLogCode, message: string, c?: CheckpointConflict, leaves?: readonly number[]): CheckDayInLogResult {
  return { ok: false, stage: 'log-read', code, message, ...(c ? { leaves: leaves ?? c.leaves, roots: c.roots } : {}) };
}

/**
 * Checks the day against the log it is bound to (see the module comment).
 *
 * @example
 * const r = await checkDayInLog({ source: logSource(url), logVerifiers: [logVkey], binding, rootAt });
 * if (!r.ok) refuse(r.code, r.leaves); // e.g. TALLY_LOG_EQUIVOCATION, [5, 9]
 */
export async function checkDayInLog(options: CheckDayInLogOptions): Promise<CheckDayInLogResult> {
  const got = await options.source('checkpoint');
  if (!got.ok) return refuse('TALLY_LOG_UNAVAILABLE', `the log's checkpoint could not be read: ${got.message}`);
  const o = openLogCheckpoint(new TextDecoder().decode(got.body), options.logVerifiers);
  if (!o.ok) return refuse('TALLY_LOG_UNSIGNED', `the served log checkpoint is ${o.message}`);
  const served = o.cp;
  const bound = options.binding.log;
  if (served.size < bound.size) return refuse('TALLY_LOG_FORK', `the log serves size ${served.size}, below the size ${bound.size} of the day's log checkpoint`);
  const max = options.maxLeaves ?? 1 << 22;
  if (served.size > max) return refuse('TALLY_LOG_TOO_LARGE', `the log has ${served.size} leaves, above the ${max} this check reads`);
  const reader = new LogReader(options.source);
  const read = await reader.readTo(served.size);
  if (!read.ok) return refuse(read.kind === 'unavailable' ? 'TALLY_LOG_UNAVAILABLE' : 'TALLY_LOG_UNSIGNED', read.message);
  if (reader.root(served.size) !== served.root) return refuse('TALLY_LOG_FORK', `the leaves served do not hash to the served checkpoint's root ${served.root} (size ${served.size})`);
  if (reader.root(bound.size) !== bound.root) return refuse('TALLY_LOG_FORK', `the log's tree of size ${bound.size} has the root ${reader.root(bound.size)}, not the day's log checkpoint's ${bound.root}`);
  const day: IndexedCheckpointLeaf = { index: options.binding.index, leaf: options.binding.leaf };
  const others: IndexedCheckpointLeaf[] = [];
  for (let i = 0; i < reader.leaves.length; i++) {
    const p = parseEngineLogLeaf(reader.leaves[i]!);
    if (!p.ok) return refuse('TALLY_LOG_UNSIGNED', `leaf ${i} is not an engine-log leaf: ${p.code}: ${p.message}`);
    if (p.leaf.kind !== 'checkpoint' || p.leaf.origin !== day.leaf.origin || i === day.index) continue;
    const other = { index: i, leaf: p.leaf };
    const c = checkpointConflict(day, other);
    if (c) return refuse(c.code, c.message, c);
    others.push(other);
  }
  const rootAt = options.rootAt;
  if (rootAt !== undefined) {
    await options.prepare?.(others.map((x) => x.leaf.size));
    for (const other of others) {
      const c = checkpointAgainstTree(other, rootAt);
      if (c) return refuse(c.code, `${c.message} (the day's tree, bound by leaf ${day.index})`, c, [day.index, other.index]);
    }
  }
  return { ok: true, log: served, leaves: reader.leaves.length, sameOrigin: others.map((x) => x.index) };
}

