/**
 * A loaded day's rows, built by the rows worker (rows-worker.ts) while the
 * verification worker verifies the same bytes. When the verdict comes, the
 * page keeps the rows of exactly the entries the verifier verified, each with
 * the entry hash the verifier computed, and drops every other row: which
 * entries count as verified is the verifier's word alone.
 */
import { toHex } from '../../protocol/index.js';
import type { Row } from './rows.js';
import type { FromRowsWorker, ToRowsWorker } from './rows-worker.js';
import RowsWorker from './rows-worker.ts?worker&inline';

/** The rows of one loaded day, as they arrive. */
export class RowFeed {
  private readonly worker: Worker;
  private readonly got: Row[] = [];
  private ended = false;
  private want: { readonly count: number; readonly leaves: Uint8Array; readonly then: (rows: Row[]) => void } | undefined;

  constructor(bundle: Blob) {
    const w = new RowsWorker();
    this.worker = w;
    w.onmessage = (ev: MessageEvent<FromRowsWorker>) => {
      const m = ev.data;
      if (m.type === 'rows') for (const r of m.rows) this.got.push(r);
      else this.ended = true;
      this.settle();
    };
    // A worker that failed builds no more rows: the verified entries it did not reach get bare rows (never a verdict's business).
    w.onerror = () => {
      this.ended = true;
      this.settle();
    };
    w.postMessage({ bundle } satisfies ToRowsWorker);
  }

  /** Calls `then` with the rows of the first `count` entries (their hashes from `leaves`) once they are built. */
  verified(count: number, leaves: Uint8Array, then: (rows: Row[]) => void): void {
    this.want = { count, leaves, then };
    this.settle();
  }

  /** Stops building (a new day, or the rows are in). */
  stop(): void {
    this.worker.terminate();
    this.want = undefined;
  }

  private settle(): void {
    const want = this.want;
    if (want === undefined || (this.got.length < want.count && !this.ended)) return;
    this.stop();
    const rows = this.got.length > want.count ? this.got.slice(0, want.count) : this.got;
    for (let i = rows.length; i < want.count; i++) rows.push({ i, kind: 'unverified', hash: '', bytes: 0 });
    for (let i = 0; i < want.count; i++) rows[i]!.hash = toHex(want.leaves.subarray(32 * i, 32 * i + 32));
    want.then(rows);
  }
}
