/** The drop zone: a day's files dropped together, each told by the name tally export gives it. */
import type { LogInputs } from './log-binding.js';

/** What a drop holds: the bundle and, when dropped beside it, its note, engine key, witness policy and log binding. */
export interface DroppedDay {
  readonly bundle: File;
  readonly note?: string;
  readonly key?: string;
  readonly policy?: string;
  readonly log: LogInputs;
}

/** Reads the files of one drop (undefined when it holds none). */
export async function droppedDay(files: readonly File[]): Promise<DroppedDay | undefined> {
  const bundle = files.find((f) => f.name.endsWith('.jsonl')) ?? files[0];
  if (!bundle) return undefined;
  // The engine log's files by the names tally export writes (log-proof.tlog-proof, log.vkey): never the day's note or engine key.
  const logProof = files.find((f) => f !== bundle && /^log-proof.*\.tlog-proof$/.test(f.name));
  const logKey = files.find((f) => f !== bundle && /^log.*\.vkey$/.test(f.name));
  // The log identity and its successors, in the order dropped (oldest first, as tally verify --log-identity takes them).
  const logIdentity = files.filter((f) => f !== bundle && /\.identity$/.test(f.name));
  const note = files.find((f) => f !== bundle && f !== logProof && /\.(note|tlog-proof)$/.test(f.name));
  const key = files.find((f) => f !== bundle && f !== logKey && /\.(vkey|key|keys)$/.test(f.name));
  const policy = files.find((f) => f !== bundle && /(^|\.)policy$/.test(f.name));
  const log: LogInputs = { ...(logProof ? { logProof: await logProof.text() } : {}), ...(logKey ? { logKey: await logKey.text() } : {}), ...(logIdentity.length > 0 ? { logIdentity: await Promise.all(logIdentity.map((f) => f.text())) } : {}) };
  return { bundle, ...(note ? { note: await note.text() } : {}), ...(key ? { key: await key.text() } : {}), ...(policy ? { policy: await policy.text() } : {}), log };
}

/** Binds the drop zone `drop`: `load` gets each drop's day. */
export function bindDrop(drop: HTMLElement, load: (d: DroppedDay) => void): void {
  drop.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (ev) => {
    ev.preventDefault();
    drop.classList.remove('over');
    void droppedDay([...(ev.dataTransfer?.files ?? [])]).then((d) => d && load(d));
  });
}
