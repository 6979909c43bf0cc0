/**
 * Wire benchmark: turns per second and turn latency (p50/p99) through
 * `tally serve`'s HTTP transport on loopback with concurrent clients, beside
 * the in-process append rate of the same engine kind measured in the same run.
 * Bounded in count and in time; loopback only; prints nothing.
 */
import { createClient } from '../client/index.js';
import { createEngine } from '../engine.js';
import { Authenticator, generateToken, hashToken } from '../server/auth.js';
import { createWireServer } from '../server/http.js';
import { createLogger } from '../server/log.js';
import { MemoryStore } from '../store/index.js';

/** Options of {@link benchWire}. */
export interface BenchWireOptions {
  /** Turns to send over the wire (default 2000). */
  readonly turns?: number;
  /** Concurrent clients, each driving its own session (default 16). */
  readonly concurrency?: number;
  /** Stop sending after this long, ms (default 10 000). */
  readonly maxMs?: number;
  /** Turns appended in process for the baseline (default 5000). */
  readonly inProcessTurns?: number;
}

/** What {@link benchWire} measured. */
export interface BenchWireResult {
  readonly wire: {
    /** Turns answered ok. */
    readonly turns: number;
    /** Frames and turns sent. */
    readonly requests: number;
    readonly seconds: number;
    readonly concurrency: number;
    readonly turnsPerSecond: number;
    readonly requestsPerSecond: number;
    /** Turn round-trip latency percentiles, ms. */
    readonly p50Ms: number;
    readonly p99Ms: number;
    /** Turns that were not answered ok (should be 0). */
    readonly failures: number;
  };
  readonly inProcess: { readonly turns: number; readonly turnsPerSecond: number };
  /** wire.turnsPerSecond / inProcess.turnsPerSecond. */
  readonly ratio: number;
  readonly note: string;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const round = (x: number, d = 2): number => Math.round(x * 10 ** d) / 10 ** d;

async function inProcessRate(turns: number): Promise<number> {
  const engine = createEngine({ store: new MemoryStore() });
  const open = await engine.open({ name: 'bench-wire-baseline' });
  if (!open.ok) throw new Error(open.message);
  const enc = new TextEncoder();
  let ms = 0;
  for (let ord = -1; ord < turns - 1; ord++) {
    const f = await engine.frame({ sessionId: open.sessionId, ordinal: ord, time: 1_000 + ord });
    if (!f.ok) throw new Error(f.message);
    const t0 = performance.now();
    const t = await engine.turn({ sessionId: open.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`{"action":"hold","i":${ord}}`) } });
    ms += performance.now() - t0;
    if (!t.ok) throw new Error(t.message);
  }
  return (turns / ms) * 1000;
}

/**
 * Runs the benchmark: an in-process server on 127.0.0.1 (memory store, intent
 * ruler on, auth on, rate limit out of the way), `concurrency` clients each
 * delivering a frame and answering it until `turns` turns or `maxMs`.
 *
 * @example
 * const r = await benchWire({ turns: 1000 });
 * // r.wire.turnsPerSecond, r.wire.p99Ms, r.inProcess.turnsPerSecond
 */
export async function benchWire(options: BenchWireOptions = {}): Promise<BenchWireResult> {
  const target = options.turns ?? 2_000;
  const concurrency = Math.max(1, options.concurrency ?? 16);
  const maxMs = options.maxMs ?? 10_000;
  const inProcess = await inProcessRate(options.inProcessTurns ?? 5_000);

  const token = generateToken();
  const auth = new Authenticator({ tokens: [{ name: 'bench', role: 'runtime', sha256: hashToken(token) }] });
  const server = createWireServer({
    engine: createEngine({ store: new MemoryStore() }),
    auth,
    logger: createLogger({ level: 'silent' }),
    limits: { rate: { perSecond: 1e6, burst: 1e6 } },
  });
  const { url } = await server.listen(0, '127.0.0.1');
  const latencies: number[] = [];
  let sent = 0;
  let requests = 0;
  let failures = 0;
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async (_, w) => {
        const client = createClient({ url, token, retry: { retries: 0 } });
        const open = await client.open({ name: 'bench-wire', worker: w });
        if (!open.ok) throw new Error(open.message);
        for (let ord = -1; sent < target && performance.now() - started < maxMs; ord++) {
          sent++;
          const f = await client.frame({ sessionId: open.sessionId, ordinal: ord, time: 1_000 + ord });
          requests++;
          if (!f.ok) throw new Error(f.message);
          const t0 = performance.now();
          const t = await client.turn({ sessionId: open.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: `{"action":"hold","w":${w},"i":${ord}}` } });
          latencies.push(performance.now() - t0);
          requests++;
          if (!t.ok) failures++;
        }
      }),
    );
  } finally {
    await server.close(1_000);
  }
  const seconds = (performance.now() - started) / 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  const turns = latencies.length - failures;
  const turnsPerSecond = turns / seconds;
  return {
    wire: {
      turns,
      requests,
      seconds: round(seconds, 3),
      concurrency,
      turnsPerSecond: Math.round(turnsPerSecond),
      requestsPerSecond: Math.round(requests / seconds),
      p50Ms: round(percentile(sorted, 50)),
      p99Ms: round(percentile(sorted, 99)),
      failures,
    },
    inProcess: { turns: options.inProcessTurns ?? 5_000, turnsPerSecond: Math.round(inProcess) },
    ratio: round(turnsPerSecond / inProcess, 4),
    note: 'wire: one frame and one turn per round trip pair, clients and server in one process on loopback (the client work is included); in-process: engine.turn alone',
  };
}
