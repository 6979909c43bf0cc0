/**
 * Entry point of a verification child process (./process-pool.ts): reads
 * segment requests on stdin, reads each segment from the shared file on fd 3,
 * proves it with {@link proveSegment} and writes the answer on stdout
 * (./pipe-frames.ts). It exits when stdin ends (its parent closed the pool,
 * or died) and on a frame it cannot read (exit 2, the reason on stderr): it
 * never guesses at bytes it was not sent.
 *
 * Why a process and not a thread: node:crypto's one-shot SHA-256 costs about
 * twice as much per call while another thread of the same process hashes too
 * (measured: 0.35 µs alone, 0.80 µs with a second hashing thread; separate
 * processes run at full speed side by side), and hashing is most of the work.
 */
import { readSync } from 'node:fs';
import { FrameReader, answerFrame, readRequest } from './pipe-frames.js';
import { proveSegment } from './segments.js';

const SHARED_FD = 3;
const reader = new FrameReader();
let buf = new Uint8Array(1 << 18);
const stop = (why: string): never => {
  process.stderr.write(`tally verify child: ${why}\n`);
  process.exit(2);
};

process.stdin.on('data', (chunk: Buffer) => {
  const frames = reader.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
  if (typeof frames === 'string') return stop(frames);
  for (const frame of frames) {
    const req = readRequest(frame);
    if (req === undefined) return stop(`an unreadable request of ${frame.length} bytes`);
    if (req.length > buf.length) buf = new Uint8Array(req.length);
    let got = 0;
    while (got < req.length) {
      const n = readSync(SHARED_FD, buf, got, req.length - got, req.offset + got);
      if (n === 0) return stop(`request ${req.id}: the shared file ends at ${req.offset + got}, before ${req.offset + req.length}`);
      got += n;
    }
    const r = proveSegment(buf.subarray(0, req.length), req.base);
    process.stdout.write(answerFrame(req.id, r.proven, r.provenEnd, r.state, new Uint8Array(r.roots)));
  }
});
process.stdin.on('end', () => process.exit(0));
