/**
 * A loaded day's rows, built by rows workers (rows-worker.ts) once the
 * verification worker has verified it: one per part of the day (split at
 * line boundaries the verifier found, row-parts.ts), all at once on the
 * cores the verifier has just freed. The page keeps the rows of exactly the
 * entries the verifier verified, each with the entry hash the verifier
 * computed, and drops every other row: which entries count as verified is
 * the verifier's word alone.
 */
import { toHex } from '../../protocol/index.js';
import type { Row } from './rows.js';
import type { FromRowsWorker, ToRowsWorker } from './rows-worker.js';
import { joinRowParts, partLength, type RowSplit } from './row-parts.js';
import RowsWorker from './rows-worker.ts?worker&inline';

interface Part {
  readonly worker: Worker;
  readonly start: number;
  /** How many verified entries it holds. */
  readonly want: number;
  readonly got: Row[];
  ended: boolean;
}

/** The rows of one verified day, as they arrive. */
export class RowFeed {
  private readonly parts: Part[];
  private readonly count: number;
  private readonly leaves: Uint8Array;
  private then: ((rows: Row[]) => void) | undefined;

  /** Builds the rows of the first `count` entries of `bundle` (their hashes from `leaves`), in parts from each of `splits`, and calls `then` with them. */
  constructor(bundle: Blob, splits: readonly RowSplit[], count: number, leaves: Uint8Array, then: (rows: Row[]) => void) {
    this.count = count;
    this.leaves = leaves;
    this.then = then;
    const bounds = [{ index: 0, offset: 0 }, ...splits];
    const starts = bounds.map((b) => b.index);
    this.parts = bounds.map((b, k) => {
      const next = bounds[k + 1];
      const w = new RowsWorker();
      const part: Part = { worker: w, start: b.index, want: partLength(starts, k, count), got: [], ended: false };
      w.onmessage = (ev: MessageEvent<FromRowsWorker>) => {
        const m = ev.data;
        if (m.type === 'rows') for (const r of m.rows) part.got.push(r);
        else part.ended = true;
        this.settle();
      };
      // A worker that failed builds no more rows: the verified entries it did not reach get bare rows (never a verdict's business).
      w.onerror = () => {
        part.ended = true;
        this.settle();
      };
      w.postMessage({ bundle: next === undefined ? bundle.slice(b.offset) : bundle.slice(b.offset, next.offset), base: b.index } satisfies ToRowsWorker);
      return part;
    });
    // No entry verified (a day failing at its first): nothing to wait for.
    this.settle();
  }

  /** Stops building (a new day, or the rows are in). */
  stop(): void {
    for (const p of this.parts) p.worker.terminate();
    this.then = undefined;
  }

  private settle(): void {
    const then = this.then;
    if (then === undefined) return;
    const parts = this.parts;
    if (parts.some((p) => p.got.length < p.want && !p.ended)) return;
    this.stop();
    const rows = joinRowParts(
      parts.map((p) => p.got),
      parts.map((p) => p.start),
      this.count,
    );
    for (let i = 0; i < this.count; i++) rows[i]!.hash = toHex(this.leaves.subarray(32 * i, 32 * i + 32));
    then(rows);
  }
}
