/**
 * The rows worker: builds a loaded day's display rows (rows.ts) once the
 * verification worker has verified it, from the same bytes (several at once,
 * each a run of whole lines: row-parts.ts). It reads the
 * bundle's lines as JSON and checks NOTHING: a verified line is canonical
 * JSON of its entry, so `JSON.parse` of it is the very entry the verifier
 * accepted, and its row is the one the verifier's entry would give. The page
 * keeps the rows of the entries the verification worker verified (their
 * hashes come from it too) and drops the rest; lines past a failure are
 * listed by the verification worker as unverified (tail.ts). So a row here
 * can never make a line count as verified, and nothing here decides a verdict.
 */
import { LineSplitter } from '../../protocol/stream.js';
import { frameTimeOf, rowOfLine, type Row } from './rows.js';

/** What the page sends: the bundle (or a run of its whole lines) whose rows to build, and the index of its first line. */
export interface ToRowsWorker {
  readonly bundle: Blob;
  readonly base?: number;
}

/** What the rows worker posts: the next rows in line order, then the end. */
export type FromRowsWorker = { readonly type: 'rows'; readonly rows: Row[] } | { readonly type: 'end' };

interface RowsScope {
  postMessage(m: FromRowsWorker): void;
  onmessage: ((ev: MessageEvent<ToRowsWorker>) => void) | null;
}
const scope = self as unknown as RowsScope;
/** Rows per message: few messages, and the page's list fills as it goes. */
const BATCH = 4096;

async function build(bundle: Blob, base: number): Promise<void> {
  const reader = bundle.stream().getReader();
  const splitter = new LineSplitter();
  let i = base;
  let frameTime: number | undefined;
  let batch: Row[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const { lines, overflow } = splitter.push(value);
    for (const line of lines) {
      const row = rowOfLine(i++, line, frameTime);
      frameTime = frameTimeOf(row) ?? frameTime;
      batch.push(row);
    }
    if (batch.length >= BATCH) {
      scope.postMessage({ type: 'rows', rows: batch });
      batch = [];
    }
    // A line longer than any entry: no entry from there on verifies.
    if (overflow) break;
  }
  if (batch.length > 0) scope.postMessage({ type: 'rows', rows: batch });
  scope.postMessage({ type: 'end' });
}

// A read that fails (the picked file changed on disk, say) ends the rows here: the page gives the entries not reached bare rows.
scope.onmessage = (ev) => void build(ev.data.bundle, ev.data.base ?? 0).catch(() => scope.postMessage({ type: 'end' }));
