/**
 * Entry point of a verification worker thread: answers each batch request
 * with {@link analyzeBatch}, transferring the records buffer back, and the
 * batch's own bytes for the main thread to reuse.
 */
import { parentPort } from 'node:worker_threads';
import { analyzeBatch } from './analyze.js';
import type { BatchRequest, SegmentRequest } from './layout.js';
import { proveSegment } from './segments.js';

const port = parentPort;
if (port) {
  port.on('message', (req: BatchRequest | SegmentRequest) => {
    if ('segment' in req) {
      const r = { ...proveSegment(new Uint8Array(req.bytes, 0, req.length), req.base), id: req.id, bytes: req.bytes };
      port.postMessage(r, [r.roots, r.bytes]);
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
