/**
 * Entry point of a verification child process (./process-pool.ts): reads
 * requests on stdin (./pipe-frames.ts). PROVE: read a segment from the shared
 * file on fd 3 and prove it (./segment-proof.ts), holding the proof, and say
 * how many lines it proved (so the parent learns where the next segment
 * starts before it joins this one). FINISH:
 * the segment's place is known; answer on stdout with its tree part. It exits
 * when stdin ends (its parent closed the pool, or died) and on a frame it
 * cannot read (exit 2, the reason on stderr): it never guesses at bytes it
 * was not sent.
 *
 * Why a process and not a thread: node:crypto's one-shot SHA-256 costs about
 * twice as much per call while another thread of the same process hashes too
 * (measured: 0.35 µs alone, 0.80 µs with a second hashing thread; separate
 * processes run at full speed side by side), and hashing is most of the work.
 */
import { readSync } from 'node:fs';
import { FINISH, FrameReader, answerFrame, provenFrame, readRequest } from './pipe-frames.js';
import { proveSegment, segmentRoots, type SegmentProof } from './segment-proof.js';

const SHARED_FD = 3;
const reader = new FrameReader();
const proofs = new Map<number, SegmentProof>();
let buf = new Uint8Array(1 << 18);
const stop = (why: string): never => {
  process.stderr.write(`tally verify child: ${why}\n`);
  process.exit(2);
};

/** Segments read and waiting to be proven, in the order they came. */
const toProve: { readonly id: number; readonly offset: number; readonly length: number }[] = [];
let scheduled = false;

/** Proves the oldest waiting segment, then lets the next requests in (a FINISH is answered before the next proof: the parent may be waiting on it). */
function proveNext(): void {
  scheduled = false;
  const job = toProve.shift();
  if (job === undefined) return;
  const { id, offset, length } = job;
  if (length > buf.length) buf = new Uint8Array(length);
  let got = 0;
  while (got < length) {
    const n = readSync(SHARED_FD, buf, got, length - got, offset + got);
    if (n === 0) return stop(`segment ${id}: the shared file ends at ${offset + got}, before ${offset + length}`);
    got += n;
  }
  // The proof keeps no view of `buf` (its leaves and state are its own), so the buffer is reused.
  const proof = proveSegment([buf.subarray(0, length)]);
  proofs.set(id, proof);
  process.stdout.write(provenFrame(id, proof.proven, proof.provenEnd));
  finishReady();
  schedule();
}

function schedule(): void {
  if (scheduled || toProve.length === 0) return;
  scheduled = true;
  setImmediate(proveNext);
}

/** FINISH requests whose segment is not proven yet, by id: base. */
const early = new Map<number, number>();

/** Answers every FINISH whose proof is ready. */
function finishReady(): void {
  for (const [id, base] of early) {
    const proof = proofs.get(id);
    if (proof === undefined) continue;
    early.delete(id);
    proofs.delete(id);
    process.stdout.write(answerFrame(id, proof.proven, proof.provenEnd, proof.state, new Uint8Array(segmentRoots(proof, base))));
  }
}

process.stdin.on('data', (chunk: Buffer) => {
  const frames = reader.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
  if (typeof frames === 'string') return stop(frames);
  for (const frame of frames) {
    const req = readRequest(frame);
    if (req === undefined) return stop(`an unreadable request of ${frame.length} bytes`);
    if (req.type === FINISH) {
      if (!proofs.has(req.id) && !toProve.some((j) => j.id === req.id)) return stop(`FINISH for segment ${req.id}, which it was not sent`);
      early.set(req.id, req.a);
    } else toProve.push({ id: req.id, offset: req.a, length: req.b });
  }
  finishReady();
  schedule();
});
process.stdin.on('end', () => process.exit(0));
