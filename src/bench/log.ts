/**
 * Engine-log benchmarks (issue #26), each a ratio against a baseline measured
 * in the same run:
 *
 * - serving a full tile: `GET /log/tile/0/000` from `WireServer` (the engine
 *   log's tiles route) against a bare node:http server answering the same
 *   8192 bytes from memory with the same headers, both over keep-alive
 *   loopback with the same client and concurrency;
 * - a seal with the engine log on (the store writes the open and checkpoint
 *   leaves) against off (the same SQLite store, the leaves not passed), per
 *   seal of a short day;
 * - with `TALLY_PG_URL`, engine-log appends per second under 64 concurrent
 *   sealing sessions on PostgreSQL, against the same days with the log off
 *   (`./log-pg.ts`);
 * - start-up of an engine log over 200,000 leaves (`TALLY_BENCH_LOG_LEAVES`)
 *   from its stored tiles, against the in-memory start it replaced, with the
 *   memory each holds (`./log-start.ts`).
 *
 * Prints nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createEngine } from '../engine.js';
import { EngineLog } from '../log/index.js';
import { createNotary, generateEngineKey } from '../receipt/index.js';
import { Authenticator, parseAuthConfig } from '../server/auth.js';
import { IMMUTABLE } from '../server/http-tiles.js';
import { createWireServer } from '../server/http.js';
import { createLogger } from '../server/log.js';
import { MemoryStore, SqliteStore, type TranscriptStore } from '../store/index.js';
import type { Figure } from './core.js';
import { benchLogStart } from './log-start.js';

const rate = (n: number, ms: number): number => Math.round((n / Math.max(ms, 1e-6)) * 1000);

/** `total` GETs of `url` from `concurrency` keep-alive loops; milliseconds. */
async function hammer(url: string, total: number, concurrency: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let next = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      get(url, { agent }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`GET ${url}: ${res.statusCode}`));
        res.on('data', () => {});
        res.on('end', resolve);
      }).on('error', reject);
    });
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) await one();
    }),
  );
  const ms = performance.now() - t0;
  agent.destroy();
  return ms;
}

function listen(s: Server): Promise<string> {
  return new Promise((r) => s.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)));
}

async function day(engine: ReturnType<typeof createEngine>, name: string, wakes: number): Promise<string> {
  const o = await engine.open({ name, day: '2026-12-01' });
  if (!o.ok) throw new Error(o.message);
  for (let ord = -1; ord < wakes; ord++) {
    const f = await engine.frame({ sessionId: o.sessionId, ordinal: ord, time: 1000 + (ord + 1) * 60_000 });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: o.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
    if (!t.ok) throw new Error(t.message);
  }
  return o.sessionId;
}

/** A store that takes no engine-log leaves (the log "off"): every call but the leaf argument goes through. */
function withoutLog(store: TranscriptStore): TranscriptStore {
  return Object.assign(Object.create(store) as TranscriptStore, {
    createSession: (g: Parameters<TranscriptStore['createSession']>[0], h: Parameters<TranscriptStore['createSession']>[1]) => store.createSession(g, h),
    recordCheckpoint: (r: Parameters<TranscriptStore['recordCheckpoint']>[0], e: Parameters<TranscriptStore['recordCheckpoint']>[1]) => store.recordCheckpoint(r, e),
  });
}

/** Runs the engine-log benchmarks. */
export async function benchLog(opts: { requests?: number; concurrency?: number; seals?: number } = {}): Promise<Figure[]> {
  const requests = opts.requests ?? 20_000;
  const concurrency = opts.concurrency ?? 16;
  const seals = opts.seals ?? Number(process.env['TALLY_BENCH_LOG_SEALS'] ?? 200);
  const engineKey = generateEngineKey('bench.example/desk');
  const figures: Figure[] = [];

  // ── a full tile, served ──
  const store = new MemoryStore();
  const engine = createEngine({ store });
  const notary = createNotary({ key: engineKey });
  for (let i = 0; i < 160; i++) {
    const o = await engine.open({ name: `bench-log-${i}` });
    if (!o.ok) throw new Error(o.message);
    const c = await notary.issueCheckpoint(engine, o.sessionId, 1);
    if (!c.ok) throw new Error(c.message);
  }
  const log = new EngineLog({ store, key: generateEngineKey('bench.example/desk/log') });
  await log.checkpoint();
  const cfg = parseAuthConfig({ tokens: [] });
  if (!cfg.ok) throw new Error(cfg.problem);
  const quiet = new Writable({ write: (_c, _e, done) => done() });
  const wire = createWireServer({ engine, auth: new Authenticator(cfg.config), logger: createLogger({ destination: quiet }), tiles: { prefix: '/log', log } });
  const wireUrl = (await wire.listen(0, '127.0.0.1')).url;
  const tile = new Uint8Array(await (await fetch(`${wireUrl}/log/tile/0/000`)).arrayBuffer());
  if (tile.length !== 8192) throw new Error(`the full tile is ${tile.length} bytes`);
  const body = Buffer.from(tile);
  const bare = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length), 'cache-control': IMMUTABLE, 'x-content-type-options': 'nosniff', 'access-control-allow-origin': '*' });
    res.end(body);
  });
  const bareUrl = await listen(bare);
  try {
    await hammer(`${wireUrl}/log/tile/0/000`, 2000, concurrency);
    await hammer(`${bareUrl}/log/tile/0/000`, 2000, concurrency);
    const served = await hammer(`${wireUrl}/log/tile/0/000`, requests, concurrency);
    const baseline = await hammer(`${bareUrl}/log/tile/0/000`, requests, concurrency);
    figures.push({
      name: `full tile served by tally serve (${concurrency} keep-alive clients)`,
      perSecond: rate(requests, served),
      baselineName: 'node:http, the same 8192 bytes from memory',
      baselinePerSecond: rate(requests, baseline),
      ratio: Math.round((baseline / served) * 1000) / 1000,
      note: `${requests} requests each; aim >= 0.8`,
    });
  } finally {
    await wire.close(1000);
    bare.closeAllConnections();
    await new Promise<void>((r) => bare.close(() => r()));
  }

  // ── a seal's latency, engine log on vs off (SQLite, synchronous=FULL) ──
  const dir = mkdtempSync(join(tmpdir(), 'tally-bench-log-'));
  try {
    const on = new SqliteStore(join(dir, 'on.db'));
    const offInner = new SqliteStore(join(dir, 'off.db'));
    const off = withoutLog(offInner);
    // On and off alternate seal by seal, so drift of the shared machine falls on both alike.
    const engines = { on: createEngine({ store: on }), off: createEngine({ store: off }) };
    const n = createNotary({ key: engineKey });
    const total = { on: 0, off: 0 };
    const each: { on: number[]; off: number[] } = { on: [], off: [] };
    for (let i = -4; i < seals; i++) {
      for (const tag of i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const e = engines[tag];
        const sid = await day(e, `bench-seal-${tag}-${i}`, 4);
        const t0 = performance.now();
        const r = await n.sealWithReceipt(e, sid);
        const ms = performance.now() - t0;
        if (i >= 0) {
          total[tag] += ms;
          each[tag].push(ms);
        }
        if (!r.ok) throw new Error(r.message);
      }
    }
    const onMs = total.on / seals;
    const offMs = total.off / seals;
    const median = (xs: number[]): number => ((s) => (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2)([...xs].sort((a, b) => a - b));
    const [onMed, offMed] = [median(each.on), median(each.off)];
    const leaves = 2 * (seals + 4); // an open leaf and the seal's leaf per day
    if ((await on.engineLogSize()) !== leaves) throw new Error(`the engine log holds ${await on.engineLogSize()} leaves, want ${leaves}`);
    if ((await offInner.engineLogSize()) !== 0) throw new Error('the log-off store took leaves');
    figures.push({
      name: 'seal with the engine log on (SQLite FULL)',
      perSecond: Math.round(1000 / onMs),
      baselineName: 'seal with the engine log off',
      baselinePerSecond: Math.round(1000 / offMs),
      ratio: Math.round((offMs / onMs) * 1000) / 1000,
      note:
        `${seals} seals each, alternating; mean ${onMs.toFixed(2)} ms vs ${offMs.toFixed(2)} ms per seal: ${onMs >= offMs ? '+' : ''}${(((onMs - offMs) / offMs) * 100).toFixed(1)} %; ` +
        `median ${onMed.toFixed(2)} vs ${offMed.toFixed(2)} ms: ${onMed >= offMed ? '+' : ''}${(((onMed - offMed) / offMed) * 100).toFixed(1)} %; aim <= 5 %`,
    });
    await on.close();
    await offInner.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  // ── engine-log appends under 64 concurrent sealing sessions on PostgreSQL (needs TALLY_PG_URL) ──
  if (process.env['TALLY_PG_URL']) {
    const { benchLogPostgres } = await import('./log-pg.js');
    figures.push(await benchLogPostgres({ off: withoutLog }));
  }

  // ── start-up over a large log: from stored tiles vs every leaf in memory ──
  figures.push(...(await benchLogStart(Number(process.env['TALLY_BENCH_LOG_LEAVES'] ?? 200_000))));
  return figures;
}
