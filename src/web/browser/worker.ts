/**
 * The verification worker: streams the bundle (`Blob.stream()`, one chunk at
 * a time) through the protocol's one verification loop — `verifyChunks`, or
 * `verifyChunksAgainstCheckpoint` when a signed checkpoint and key are given,
 * exactly the rules `tally verify [--key --checkpoint]` runs — and posts
 * progress and display rows. Memory: the verifier's O(log n) frontier and one
 * chunk, plus what the page needs afterwards — per entry one leaf hash (for
 * inclusion proofs) and its byte offset (to re-read its bytes for a receipt).
 */
import { MerkleLevels, fromHex, rfc6962Hasher, toHex, verifyChunks, type ChainVerifier, type VerifiedEntry } from '../../protocol/index.js';
import { parseTlogProof, TLOG_PROOF_HEADER } from '../../receipt/checkpoint/tlogProof.js';
import { decodeVerifierKey } from '../../receipt/note/verifier-key-text.js';
import { formatKeyId } from '../../receipt/note/layout.js';
import { verifyChunksAgainstCheckpoint } from '../../receipt/proof/bundle-checkpoint.js';
import { formatTurnReceipt } from '../../receipt/proof/turn-receipt-text.js';
import { sessionCheckpointFromNote, type SessionCheckpoint } from '../../receipt/session/checkpoint-note.js';
import { openNoteWebCrypto, sha256 } from './crypto.js';
import type { FromWorker, ToWorker, Verdict, Witnessed } from './messages.js';
import { replayDay } from './replay.js';
import { checkWitnesses } from './witness.js';
import { rowOf, type Row } from './rows.js';
import { specSealsMandate } from '../../referee/replay-ruler.js';

interface WorkerScope {
  postMessage(m: FromWorker): void;
  onmessage: ((ev: MessageEvent<ToWorker>) => void) | null;
}
const scope = self as unknown as WorkerScope;
const post = (m: FromWorker): void => scope.postMessage(m);

let tree = new MerkleLevels(rfc6962Hasher(sha256));
let offsets: number[] = [];
let bundle: Blob | undefined;
let checkpoint: SessionCheckpoint | undefined;
let sealsMandate = false;
let requireSealed = true;
let verifiedEntries = 0;

async function* chunksOf(blob: Blob, onBytes: (n: number) => void): AsyncGenerator<Uint8Array> {
  const reader = blob.stream().getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    onBytes(value.length);
    yield value;
  }
}

/** The signed checkpoint inside a receipt note or a tlog-proof (whose checkpoint follows its proof). */
function signedCheckpointOf(text: string): string | { problem: string } {
  if (!text.startsWith(`${TLOG_PROOF_HEADER}\n`)) return text;
  const p = parseTlogProof(text);
  return p.ok ? p.tlogProof.signedCheckpoint : { problem: `tlog-proof: ${p.code}: ${p.message}` };
}

async function openPin(cpText: string, vkeyText: string, policyText: string | undefined): Promise<{ cp: SessionCheckpoint; witnessed?: Witnessed } | Verdict> {
  const keys = [];
  for (const line of vkeyText.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))) {
    const k = decodeVerifierKey(line);
    if (!k.ok) return { state: 'failed-pin', stage: 'key', code: k.code, message: k.message };
    keys.push(k.key);
  }
  if (keys.length === 0) return { state: 'failed-pin', stage: 'key', code: 'malformed-verifier-key', message: 'no verifier key given' };
  const signed = signedCheckpointOf(cpText);
  if (typeof signed !== 'string') return { state: 'failed-pin', stage: 'proof', code: 'bad-tlog-proof', message: signed.problem };
  // With a policy, the quorum first (as verifyWitnessedBundleCheckpoint: cheap, and a refusal there is the CLI's).
  const witnessed = policyText === undefined ? undefined : await checkWitnesses(signed, keys, policyText);
  if (witnessed !== undefined && 'state' in witnessed) return witnessed;
  const opened = sessionCheckpointFromNote(await openNoteWebCrypto(signed, keys), signed);
  if (!opened.ok) return { state: 'failed-pin', stage: opened.stage, code: opened.code, message: opened.message };
  return { cp: opened.checkpoint, ...(witnessed === undefined ? {} : { witnessed }) };
}

async function verify(msg: Extract<ToWorker, { type: 'verify' }>): Promise<void> {
  const t0 = performance.now();
  tree = new MerkleLevels(rfc6962Hasher(sha256));
  offsets = [];
  bundle = msg.bundle;
  checkpoint = undefined;
  sealsMandate = false;
  requireSealed = msg.unsealed !== true;
  const total = msg.bundle.size;
  let bytes = 0;
  let offset = 0;
  let rows: Row[] = [];
  let frameTime: number | undefined;
  let lastPost = 0;
  const onEntry = (e: VerifiedEntry, line: Uint8Array): void => {
    tree.append(fromHex(e.hash));
    offsets.push(offset);
    offset += line.length + 1;
    if (e.entry.kind === 'frame') frameTime = e.entry.time;
    else if (e.entry.kind === 'genesis') sealsMandate = specSealsMandate(e.entry.spec);
    rows.push(rowOf(e.index, e.hash, line.length, e.entry, frameTime));
  };
  const onChunk = async (): Promise<void> => {
    if (rows.length >= 2000 || bytes === total) {
      post({ type: 'rows', rows });
      rows = [];
    }
    const now = performance.now();
    if (now - lastPost > 50 || bytes === total) {
      lastPost = now;
      post({ type: 'progress', bytes, total, entries: offsets.length });
    }
  };
  const chunks = chunksOf(msg.bundle, (n) => (bytes += n));
  let verdict: Verdict;
  if (msg.checkpoint !== undefined && msg.vkey !== undefined) {
    const opened = await openPin(msg.checkpoint, msg.vkey, msg.policy);
    if ('state' in opened) {
      verdict = opened;
    } else {
      const pin = opened.cp;
      checkpoint = pin;
      const r = await verifyChunksAgainstCheckpoint(sha256, chunks, pin, { onEntry, onChunk, requireSealed: msg.unsealed !== true });
      if (r.ok) {
        verdict = { state: 'pinned', root: pin.root, size: pin.size, total: r.summary.size, sessionId: r.summary.sessionId, signedBy: pin.signedBy.map((s) => `${s.name}+${formatKeyId(s.keyId)}`), coversAll: r.coversAll, sealed: r.summary.sealed, ...(opened.witnessed === undefined ? {} : { witnessed: opened.witnessed }) };
      } else if (r.stage === 'chain') {
        verdict = { state: 'failed-entry', index: r.index, code: r.code, message: r.message };
      } else {
        verdict = { state: 'failed-pin', stage: r.stage, code: r.code, message: r.message };
      }
    }
  } else {
    const r = await verifyChunks(sha256, chunks, { onEntry: (e: VerifiedEntry, line: Uint8Array, _v: ChainVerifier) => onEntry(e, line), onChunk, requireSealed: msg.unsealed !== true });
    const why = `${msg.checkpoint !== undefined ? 'a checkpoint was given without the engine verifier key' : msg.vkey !== undefined ? 'a key was given without a checkpoint' : 'no signed checkpoint and key were given'}${msg.policy !== undefined ? ' (the witness policy needs them: not pinned by quorum)' : ''}`;
    verdict = r.ok ? { state: 'unpinned', root: r.receiptRoot, size: r.size, sessionId: r.sessionId, sealed: r.sealed, why } : { state: 'failed-entry', index: r.index, code: r.code, message: r.message };
  }
  if (rows.length > 0) post({ type: 'rows', rows });
  post({ type: 'progress', bytes, total, entries: offsets.length });
  verifiedEntries = offsets.length;
  post({ type: 'done', verdict, ms: performance.now() - t0, sealsMandate });
}

async function replayBundle(): Promise<void> {
  if (bundle === undefined) return;
  const t0 = performance.now();
  let last = 0;
  const report = await replayDay(bundle, sealsMandate, requireSealed, (i) => {
    const now = performance.now();
    if (now - last > 100) {
      last = now;
      post({ type: 'replay-progress', entries: i + 1, total: verifiedEntries });
    }
  });
  post({ type: 'replayed', report, ms: performance.now() - t0 });
}

async function receipt(index: number, download: boolean): Promise<void> {
  const cp = checkpoint;
  if (cp === undefined || bundle === undefined) return post({ type: 'receipt', index, download, problem: 'no pinned checkpoint: load the signed receipt note and the engine key to get receipts' });
  if (index >= cp.size || index >= offsets.length) return post({ type: 'receipt', index, download, problem: `entry ${index} is not covered by the pinned checkpoint (size ${cp.size})` });
  const start = offsets[index]!;
  const end = index + 1 < offsets.length ? offsets[index + 1]! - 1 : start + (await lineLength(bundle, start));
  const entryBytes = new Uint8Array(await bundle.slice(start, end).arrayBuffer());
  const proof = tree.inclusionProof(index, cp.size);
  if (toHex(tree.root(cp.size)) !== cp.root) return post({ type: 'receipt', index, download, problem: 'the tree does not match the checkpoint' });
  post({ type: 'receipt', index, download, proof: proof.map(toHex), size: cp.size, root: cp.root, text: formatTurnReceipt({ index, proof, signedCheckpoint: cp.signedCheckpoint, entryBytes }) });
}

async function lineLength(blob: Blob, start: number): Promise<number> {
  const rest = new Uint8Array(await blob.slice(start).arrayBuffer());
  const nl = rest.indexOf(0x0a);
  return nl < 0 ? rest.length : nl;
}

scope.onmessage = (ev) => {
  const m = ev.data;
  if (m.type === 'verify') void verify(m);
  else if (m.type === 'replay') void replayBundle();
  else void receipt(m.index, m.download);
};
