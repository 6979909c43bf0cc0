/**
 * Entry point of a verification worker thread: answers each batch request
 * with {@link analyzeBatch}, transferring the records buffer back.
 */
import { parentPort } from 'node:worker_threads';
import { analyzeBatch } from './analyze.js';
import type { BatchRequest } from './layout.js';

const port = parentPort;
if (port) {
  port.on('message', (req: BatchRequest) => {
    const r = analyzeBatch(req.id, new Uint8Array(req.bytes), req.ends, {
      ...(req.separated === undefined ? {} : { separated: req.separated }),
      ...(req.base === undefined ? {} : { base: req.base }),
    });
    port.postMessage(r, r.roots === undefined ? [r.records] : [r.records, r.roots]);
  });
}
