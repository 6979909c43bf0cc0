/**
 * Entry point of a verification worker thread: answers each batch request
 * with {@link analyzeBatch}, transferring the records buffer back, and the
 * batch's own bytes for the main thread to reuse; proves each segment when it
 * comes and answers it, with its tree part, once told its place
 * (./segment-proof.ts).
 */
import { parentPort } from 'node:worker_threads';
import { analyzeBatch } from './analyze.js';
import type { BatchRequest, SegmentMessage } from './layout.js';
import { proveSegment, segmentRoots, type SegmentProof } from './segment-proof.js';

const port = parentPort;
const proofs = new Map<number, { proof: SegmentProof; bytes: ArrayBuffer }>();
if (port) {
  port.on('message', (req: BatchRequest | SegmentMessage) => {
    if ('segment' in req) {
      const proof = proveSegment([new Uint8Array(req.bytes, 0, req.length)]);
      proofs.set(req.id, { proof, bytes: req.bytes });
      port.postMessage({ id: req.id, proven: proof.proven, provenEnd: proof.provenEnd, early: true });
      return;
    }
    if ('finish' in req) {
      const held = proofs.get(req.id);
      if (held === undefined) throw new Error(`no segment ${req.id} to finish`);
      proofs.delete(req.id);
      const { proof, bytes } = held;
      const roots = segmentRoots(proof, req.base);
      port.postMessage({ id: req.id, proven: proof.proven, provenEnd: proof.provenEnd, state: proof.state, roots, bytes }, [roots, bytes]);
      return;
    }
    const r = analyzeBatch(req.id, new Uint8Array(req.bytes), req.ends, {
      ...(req.separated === undefined ? {} : { separated: req.separated }),
      ...(req.base === undefined ? {} : { base: req.base }),
    });
    // The batch's bytes go back too (read and no longer needed here): the main thread refills them.
    const reply = { ...r, bytes: req.bytes };
    port.postMessage(reply, r.roots === undefined ? [r.records, req.bytes] : [r.records, r.roots, req.bytes]);
  });
}
