/**
 * The verification worker: streams the bundle (`Blob.stream()`, one chunk at
 * a time) through the protocol's one verification loop — `verifyChunks`, or
 * `verifyChunksAgainstCheckpoint` when a signed checkpoint and key are given,
 * exactly the rules `tally verify [--key --checkpoint]` runs — verdict
 * only (nothing built per line), and posts progress, the lines listed
 * unverified after a failure, and with the verdict the verified entries'
 * hashes: a loaded day's display rows are built beside it by the rows worker
 * (row-feed.ts). A live day is followed incrementally (follow.ts), its rows
 * built here as it verifies. Memory: the verifier's O(log n) frontier and one chunk, plus
 * what the page needs afterwards (day.ts) — per entry one leaf hash (for
 * inclusion proofs) and its byte offset (to re-read its bytes for a receipt).
 */
import { toHex, verifyChunks, type ChainVerifier } from '../../protocol/index.js';
import { formatKeyId } from '../../receipt/note/layout.js';
import { verifyChunksAgainstCheckpoint } from '../../receipt/proof/bundle-checkpoint.js';
import { formatTurnReceipt } from '../../receipt/proof/turn-receipt-text.js';
import { sha256 } from './crypto.js';
import { sha256Ready } from './sha256-wasm.js';
import { bundleOf, collectLeaf, newDay, takeRows, treeOf, type Day } from './day.js';
import { Follower } from './follow.js';
import type { FromWorker, ReplayReport, ToWorker, Verdict } from './messages.js';
import { checkLogBindingInPage } from './log-binding.js';
import { checkPack } from './pack.js';
import { openPin } from './pin.js';
import { replayDay } from './replay.js';
import { chooseReplayRuler } from '../../payments/replay-ruler.js';
import { unverifiedRows, whyUnverified } from './tail.js';
import { ROW_PARTS, rowSplits } from './row-parts.js';

interface WorkerScope {
  postMessage(m: FromWorker, transfer?: Transferable[]): void;
  onmessage: ((ev: MessageEvent<ToWorker>) => void) | null;
}
const scope = self as unknown as WorkerScope;
const post = (m: FromWorker): void => scope.postMessage(m);

let day: Day = newDay(true);
let follower: Follower | undefined;
/** Live-follow messages run one after another (append, then the checkpoint that covers it). */
let queue: Promise<void> = Promise.resolve();

async function* chunksOf(blob: Blob, onBytes: (n: number) => void): AsyncGenerator<Uint8Array> {
  const reader = blob.stream().getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    onBytes(value.length);
    yield value;
  }
}

async function verify(msg: Extract<ToWorker, { type: 'verify' }>): Promise<void> {
  // The WebAssembly SHA-256 compiles once, asynchronously: wait for it (or its failure: noble then hashes, the same digests).
  await sha256Ready;
  const t0 = performance.now();
  follower = undefined;
  day = newDay(msg.unsealed !== true);
  day.parts = [msg.bundle];
  const total = msg.bundle.size;
  let bytes = 0;
  let lastPost = 0;
  // Verdict-only verification: per accepted line its hash and offset, nothing built (the rows worker builds the rows).
  const onAccepted = (line: Uint8Array, v: ChainVerifier): void => collectLeaf(day, line, v);
  const onChunk = async (): Promise<void> => {
    const now = performance.now();
    if (now - lastPost > 50 || bytes === total) {
      lastPost = now;
      post({ type: 'progress', bytes, total, entries: day.offsets.length });
    }
  };
  const chunks = chunksOf(msg.bundle, (n) => (bytes += n));
  let verdict: Verdict;
  const hand = msg.pin === undefined ? {} : { hand: msg.pin };
  if (msg.checkpoint !== undefined && msg.vkey !== undefined) {
    // With a log key the witness policy is the log checkpoint's (what witnesses cosign is the engine log), as tally verify --log-key.
    const opened = await openPin(msg.checkpoint, msg.vkey, msg.logKey === undefined ? msg.policy : undefined);
    if ('state' in opened) {
      // The pin failed (a bad key, note or quorum): the day is still checked on its own, so it stays browsable as unpinned.
      const r = await verifyChunks(sha256, chunks, { onAccepted, onChunk, requireSealed: day.requireSealed, ...(msg.pin === undefined ? {} : { pin: msg.pin }) });
      verdict = r.ok ? { ...opened, day: { root: r.receiptRoot, size: r.size, sessionId: r.sessionId, sealed: r.sealed } } : { ...opened, chain: { index: r.index, code: r.code, message: r.message } };
    } else {
      const pin = opened.cp;
      day.checkpoint = pin;
      const r = await verifyChunksAgainstCheckpoint(sha256, chunks, pin, { onAccepted, onChunk, requireSealed: day.requireSealed, ...(msg.pin === undefined ? {} : { pin: msg.pin }) });
      const log = r.ok ? await checkLogBindingInPage(msg, pin, r.coversAll && r.summary.sealed, msg.logKey === undefined ? undefined : msg.policy) : undefined;
      if (r.ok && log !== undefined && 'state' in log && log.state === 'failed-pin') {
        // The chain and the session checkpoint verified, the binding the grader required did not: browsable, unpinned.
        verdict = { ...log, day: { root: r.summary.receiptRoot, size: r.summary.size, sessionId: r.summary.sessionId, sealed: r.summary.sealed } };
      } else if (r.ok) {
        verdict = { state: 'pinned', root: pin.root, size: pin.size, total: r.summary.size, sessionId: r.summary.sessionId, signedBy: pin.signedBy.map((s) => `${s.name}+${formatKeyId(s.keyId)}`), coversAll: r.coversAll, sealed: r.summary.sealed, ...(opened.witnessed === undefined ? {} : { witnessed: opened.witnessed }), ...hand, ...(log === undefined || 'state' in log ? {} : { log }) };
      } else if (r.stage === 'chain') {
        verdict = { state: 'failed-entry', index: r.index, code: r.code, message: r.message };
      } else {
        // The chain verified (only the checkpoint's root or size disagrees): the day stays browsable, unpinned.
        const n = day.offsets.length;
        verdict = { state: 'failed-pin', stage: r.stage, code: r.code, message: r.message, ...(n > 0 ? { day: { root: toHex(treeOf(day).root(n)), size: n, sessionId: day.sessionId ?? '', sealed: day.sealed } } : {}) };
      }
    }
  } else {
    const r = await verifyChunks(sha256, chunks, { onAccepted, onChunk, requireSealed: day.requireSealed, ...(msg.pin === undefined ? {} : { pin: msg.pin }) });
    const why = `${msg.logKey !== undefined || msg.logIdentity !== undefined ? 'the log key needs the signed checkpoint and engine key (the binding is of the session checkpoint); ' : ''}${msg.checkpoint !== undefined ? 'a checkpoint was given without the engine verifier key' : msg.vkey !== undefined ? 'a key was given without a checkpoint' : 'no signed checkpoint and key were given'}${msg.policy !== undefined ? ' (the witness policy needs them: not pinned by quorum)' : ''}`;
    // Values typed by hand pin the day as `tally verify --root/--session/--size` does: valid, pinned to them.
    verdict = !r.ok
      ? { state: 'failed-entry', index: r.index, code: r.code, message: r.message }
      : msg.pin !== undefined
        ? { state: 'pinned', root: r.receiptRoot, size: r.size, total: r.size, sessionId: r.sessionId, signedBy: [], coversAll: true, sealed: r.sealed, hand: msg.pin }
        : { state: 'unpinned', root: r.receiptRoot, size: r.size, sessionId: r.sessionId, sealed: r.sealed, why };
  }
  // A failed chain: the lines from the first bad entry on are listed, marked not verified (never trusted or charted).
  const cut = verdict.state === 'failed-entry' ? verdict : verdict.state === 'failed-pin' ? verdict.chain : undefined;
  if (cut !== undefined) {
    for (const r of await unverifiedRows(msg.bundle, day.nextOffset, day.offsets.length, whyUnverified(cut), day.tail)) day.rows.push(r);
  }
  if (day.rows.length > 0) post({ type: 'rows', rows: takeRows(day) });
  post({ type: 'progress', bytes, total, entries: day.offsets.length });
  // The verified entries' hashes, for the rows the rows workers build (moved, not copied), and where each of their parts starts.
  const n = day.offsets.length;
  const leaves = day.leaves.slice(0, 32 * n);
  const splits = rowSplits(day.offsets, n, ROW_PARTS);
  scope.postMessage({ type: 'done', verdict, ms: performance.now() - t0, sealsMandate: day.sealsMandate, verified: { count: n, leaves, splits } }, [leaves.buffer]);
}

/** Posts what a live day's last step changed: new rows, progress, the verdict now. */
function postLive(f: Follower, t0: number): void {
  if (f !== follower) return;
  if (f.day.rows.length > 0) post({ type: 'rows', rows: takeRows(f.day) });
  post({ type: 'progress', bytes: f.day.nextOffset, total: f.day.nextOffset, entries: f.day.offsets.length });
  post({ type: 'done', verdict: f.verdict(), ms: performance.now() - t0, sealsMandate: f.day.sealsMandate, live: true });
}

async function replayBundle(): Promise<void> {
  if (day.offsets.length === 0) return;
  const t0 = performance.now();
  let last = 0;
  const total = day.offsets.length;
  let report: ReplayReport;
  try {
    report = await replayDay(bundleOf(day), day.authority, day.requireSealed, (i) => {
      const now = performance.now();
      if (now - last > 100) {
        last = now;
        post({ type: 'replay-progress', entries: i + 1, total });
      }
    });
  } catch (e) {
    // `tally replay` would stop with the same error: say so rather than spin.
    report = { state: 'error', ruler: chooseReplayRuler('auto', day.authority).name, turns: 0, rulings: 0, divergences: [], facts: [], error: e instanceof Error ? `${(e as { code?: string }).code ?? e.name}: ${e.message}` : String(e) };
  }
  post({ type: 'replayed', report, ms: performance.now() - t0 });
}

async function receipt(index: number, download: boolean): Promise<void> {
  const cp = day.checkpoint;
  const offsets = day.offsets;
  if (cp === undefined) return post({ type: 'receipt', index, download, problem: 'no pinned checkpoint: load the signed receipt note and the engine key to get receipts' });
  if (index >= cp.size || index >= offsets.length) return post({ type: 'receipt', index, download, problem: `entry ${index} is not covered by the pinned checkpoint (size ${cp.size})` });
  const bundle = bundleOf(day);
  const start = offsets[index]!;
  const end = index + 1 < offsets.length ? offsets[index + 1]! - 1 : start + (await lineLength(bundle, start));
  const entryBytes = new Uint8Array(await bundle.slice(start, end).arrayBuffer());
  const proof = treeOf(day).inclusionProof(index, cp.size);
  if (toHex(treeOf(day).root(cp.size)) !== cp.root) return post({ type: 'receipt', index, download, problem: 'the tree does not match the checkpoint' });
  post({ type: 'receipt', index, download, proof: proof.map(toHex), size: cp.size, root: cp.root, text: formatTurnReceipt({ index, proof, signedCheckpoint: cp.signedCheckpoint, entryBytes }) });
}

const MAX_ENTRY_TEXT = 1 << 18;

/** Posts entry `index`'s line as text (cut at 256 KiB; shown as text only). */
async function entryText(index: number): Promise<void> {
  // Verified lines, then a failed day's unverified ones: one run of line offsets.
  const at = (i: number): number | undefined => (i < day.offsets.length ? day.offsets[i] : day.tail[i - day.offsets.length]);
  const start = at(index);
  if (index < 0 || start === undefined) return;
  const bundle = bundleOf(day);
  const next = at(index + 1);
  const end = next !== undefined ? next - 1 : start + (await lineLength(bundle, start));
  const bytes = new Uint8Array(await bundle.slice(start, Math.min(end, start + MAX_ENTRY_TEXT)).arrayBuffer());
  post({ type: 'entry', index, text: new TextDecoder().decode(bytes) + (end - start > MAX_ENTRY_TEXT ? '…' : '') });
}

async function lineLength(blob: Blob, start: number): Promise<number> {
  const rest = new Uint8Array(await blob.slice(start).arrayBuffer());
  const nl = rest.indexOf(0x0a);
  return nl < 0 ? rest.length : nl;
}

scope.onmessage = (ev) => {
  const m = ev.data;
  const t0 = performance.now();
  if (m.type === 'verify') void verify(m);
  else if (m.type === 'replay') void replayBundle();
  else if (m.type === 'receipt') void receipt(m.index, m.download);
  else if (m.type === 'entry') void entryText(m.index);
  else if (m.type === 'evidence') void checkPack(m.pack, m.vkey, m.policy).then((report) => post({ type: 'evidence-checked', report, ms: performance.now() - t0 }));
  else if (m.type === 'follow') {
    const f = new Follower();
    follower = f;
    day = f.day;
    queue = Promise.resolve();
  } else {
    const f = follower;
    if (f === undefined) return;
    queue = queue.then(async () => {
      for (const bytes of m.pieces) await f.append(bytes);
      if (m.checkpoint !== undefined && m.vkey !== undefined) await f.repin(m.checkpoint, m.vkey, m.log);
      // One verdict per poll: the new entries and the checkpoint that covers them, together.
      postLive(f, t0);
    });
  }
};
