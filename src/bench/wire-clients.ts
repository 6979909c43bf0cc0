/**
 * The wire benchmark's client process: `concurrency` clients of the client
 * library (its default keep-alive transport), each opening a session and then
 * sending frame + turn pairs until `turns` turns or `maxMs`. Before the clock
 * starts every client sends `warmup` pairs (default 150) on its session: the
 * first second of a fresh server is JIT compilation and lazily loaded
 * modules, whose stalls would otherwise be most of the p99 (cold figures are
 * returned beside the warm ones). Reads its job as JSON in argv[2]; writes
 * one JSON line of results on stdout.
 */
import { createClient } from '../client/index.js';

interface Job {
  readonly url: string;
  readonly token: string;
  readonly turns: number;
  readonly concurrency: number;
  readonly maxMs: number;
  readonly warmup?: number;
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
const ordinals = sessions.map(() => -1);
/** Sends frame + turn pairs on every session until `stop` (asked before each pair); reports each turn's latency. */
async function drive(stop: () => boolean, onTurn: (ms: number, ok: boolean) => void): Promise<void> {
  await Promise.all(
    clients.map(async (client, w) => {
      const sessionId = sessions[w]!;
      while (!stop()) {
        const ord = ordinals[w]!++;
        const f = await client.frame({ sessionId, ordinal: ord, time: 1_000 + ord });
        if (!f.ok) throw new Error(f.message);
        const t0 = performance.now();
        const t = await client.turn({ sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: `{"action":"hold","w":${w},"i":${ord}}` } });
        onTurn(performance.now() - t0, t.ok);
      }
    }),
  );
}

const cold: number[] = [];
const warmupTurns = (job.warmup ?? 150) * job.concurrency;
const warmStart = performance.now();
await drive(() => cold.length + job.concurrency > warmupTurns || performance.now() - warmStart > job.maxMs, (ms) => cold.push(ms));
started = performance.now();
// A turn is counted when it is sent, so the clients together send at most `turns`.
await drive(() => sent >= job.turns || performance.now() - started >= job.maxMs || (sent++, false), (ms, ok) => {
  latencies.push(ms);
  if (!ok) failures++;
});
const seconds = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
cold.sort((a, b) => a - b);
process.stdout.write(
  JSON.stringify({
    turns: latencies.length - failures,
    failures,
    seconds,
    turnsPerSecond: (latencies.length - failures) / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    warmupTurns: cold.length,
    warmupP99Ms: percentile(cold, 99),
  }) + '\n',
);
