/**
 * The wire benchmark's client process: `concurrency` clients of the client
 * library (its default keep-alive transport), each opening a session and then
 * sending frame + turn pairs until `turns` turns or `maxMs`. Reads its job as
 * JSON in argv[2]; writes one JSON line of results on stdout.
 */
import { createClient } from '../client/index.js';

interface Job {
  readonly url: string;
  readonly token: string;
  readonly turns: number;
  readonly concurrency: number;
  readonly maxMs: number;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const job = JSON.parse(process.argv[2] ?? '{}') as Job;
const latencies: number[] = [];
let sent = 0;
let failures = 0;
let started = 0;
const clients = Array.from({ length: job.concurrency }, () => createClient({ url: job.url, token: job.token, retry: { retries: 0 } }));
// Sessions are opened (and sockets warmed) before the clock starts.
const sessions = await Promise.all(
  clients.map(async (client, w) => {
    const open = await client.open({ name: 'bench-wire', worker: w, pid: process.pid });
    if (!open.ok) throw new Error(open.message);
    return open.sessionId;
  }),
);
started = performance.now();
await Promise.all(
  clients.map(async (client, w) => {
    const sessionId = sessions[w]!;
    for (let ord = -1; sent < job.turns && performance.now() - started < job.maxMs; ord++) {
      sent++;
      const f = await client.frame({ sessionId, ordinal: ord, time: 1_000 + ord });
      if (!f.ok) throw new Error(f.message);
      const t0 = performance.now();
      const t = await client.turn({ sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: `{"action":"hold","w":${w},"i":${ord}}` } });
      latencies.push(performance.now() - t0);
      if (!t.ok) failures++;
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
process.stdout.write(
  JSON.stringify({ turns: latencies.length - failures, failures, seconds, turnsPerSecond: (latencies.length - failures) / seconds, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) }) + '\n',
);
