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
    const r = analyzeBatch(req.id, new Uint8Array(req.bytes), req.ends);
    port.postMessage(r, [r.records]);
  });
}
