/**
 * How much parallelism the machine gives this process right now: the same
 * CPU-bound work on one worker thread, then on two at once. On an idle
 * 2-core machine two workers finish in about the time of one (≈ 2 cores);
 * when other processes keep the cores busy, parallel figures cannot beat the
 * single-thread ones, and this number says so beside them.
 */
import { Worker } from 'node:worker_threads';

const SPIN = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (n) => {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003;
  parentPort.postMessage(x);
});`;

async function spin(workers: number, loops: number): Promise<number> {
  const ws = Array.from({ length: workers }, () => new Worker(SPIN, { eval: true }));
  try {
    // Start-up is not measured: one tiny round first.
    await Promise.all(ws.map((w) => new Promise((resolve) => { w.once('message', resolve); w.postMessage(1); })));
    const t0 = performance.now();
    await Promise.all(ws.map((w) => new Promise((resolve) => { w.once('message', resolve); w.postMessage(loops); })));
    return performance.now() - t0;
  } finally {
    await Promise.all(ws.map((w) => w.terminate()));
  }
}

/**
 * Effective cores for two threads (1.0–2.0): `2 × t(one worker) / t(two workers)`.
 *
 * @example
 * const cores = await effectiveCores(); // 1.97 on an idle 2-core machine
 */
export async function effectiveCores(loops = 60_000_000): Promise<number> {
  const one = await spin(1, loops);
  const two = await spin(2, loops);
  return Math.min(2, Math.max(0, (2 * one) / two));
}
