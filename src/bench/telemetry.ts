/**
 * What OpenTelemetry costs. Three figures, each beside its baseline from the
 * same run: (1) the instrumentation a library user always runs with no SDK
 * registered (the API's no-ops: a verb span, an append span, the metric
 * calls) against the same work without it; (2) in-process turns with an SDK
 * registered (spans batched to a discarding exporter, metrics aggregated)
 * against none; (3) wire turns/s through `tally serve`'s transport with the
 * `--otel` SDK (OTLP/HTTP to a loopback sink) against without.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Figure } from './core.js';
import { benchWire } from './wire.js';
import { createEngine } from '../engine.js';
import { MemoryStore } from '../store/index.js';
import { traceAppend, traceVerb } from '../telemetry/index.js';

const enc = new TextEncoder();

/** In-process turns per second on a fresh engine (memory store, intent ruler idle: no agents). */
async function turnRate(turns: number): Promise<number> {
  const engine = createEngine({ store: new MemoryStore() });
  const open = await engine.open({ name: 'bench-otel' });
  if (!open.ok) throw new Error(open.message);
  let ms = 0;
  for (let ord = -1; ord < turns - 1; ord++) {
    const f = await engine.frame({ sessionId: open.sessionId, ordinal: ord, time: 1_000 + ord });
    if (!f.ok) throw new Error(f.message);
    const t0 = performance.now();
    const t = await engine.turn({ sessionId: open.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`{"i":${ord}}`) } });
    ms += performance.now() - t0;
    if (!t.ok) throw new Error(t.message);
  }
  return (turns / ms) * 1000;
}

/** Calls per second of the per-turn instrumentation (verb span + append span + metrics) around an async no-op, and of the no-op alone. */
async function noopOverhead(n: number): Promise<{ traced: number; bare: number }> {
  const result = { ok: true, sessionId: 'ab'.repeat(32), ordinal: 1, index: 2, duplicate: false } as const;
  const work = async (): Promise<typeof result> => result;
  const append = async (): Promise<{ ok: true }> => ({ ok: true });
  let t0 = performance.now();
  for (let i = 0; i < n; i++) {
    await work();
    await append();
  }
  const bare = (n / (performance.now() - t0)) * 1000;
  t0 = performance.now();
  for (let i = 0; i < n; i++) await traceVerb('turn', result, async () => (await traceAppend(append), work()));
  const traced = (n / (performance.now() - t0)) * 1000;
  return { traced, bare };
}

/** A loopback OTLP sink that accepts and discards every export. */
async function sink(): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

/**
 * Runs the three comparisons (bounded: a few seconds). Needs the SDK packages
 * (devDependencies); without them only the no-SDK figure is reported.
 *
 * @example
 * const figures = await benchTelemetry({ turns: 2000 });
 */
export async function benchTelemetry(options: { readonly turns?: number; readonly wireTurns?: number } = {}): Promise<Figure[]> {
  const turns = options.turns ?? 5_000;
  const figures: Figure[] = [];
  const o = await noopOverhead(turns * 4);
  const plain = await turnRate(turns);
  const nsPerTurn = (1e9 / o.traced - 1e9 / o.bare);
  figures.push({
    name: 'no-op instrumentation per turn (no SDK)',
    perSecond: Math.round(o.traced),
    baselineName: 'same calls uninstrumented',
    baselinePerSecond: Math.round(o.bare),
    ratio: o.traced / o.bare,
    note: `${Math.round(nsPerTurn)} ns per turn = ${((nsPerTurn / (1e9 / plain)) * 100).toFixed(2)}% of an in-process turn (${Math.round(plain)}/s)`,
  });
  const { startTelemetry } = await import('../telemetry/sdk.js');
  const out = await sink();
  const saved = process.env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = out.url;
  try {
    const before = await benchWire({ turns: options.wireTurns ?? 2_000, concurrency: 16, maxMs: 8_000, inProcessTurns: 200 });
    const telemetry = await startTelemetry({ otlp: true, env: { OTEL_METRIC_EXPORT_INTERVAL: '1000' } });
    try {
      const sdkRate = await turnRate(turns);
      figures.push({ name: 'in-process turns, SDK registered (spans + metrics)', perSecond: Math.round(sdkRate), baselineName: 'no SDK (API no-op)', baselinePerSecond: Math.round(plain), ratio: sdkRate / plain });
      const after = await benchWire({ turns: options.wireTurns ?? 2_000, concurrency: 16, maxMs: 8_000, inProcessTurns: 200 });
      figures.push({
        name: 'wire turns, --otel (OTLP/HTTP to a loopback sink)',
        perSecond: after.wire.turnsPerSecond,
        baselineName: 'without --otel',
        baselinePerSecond: before.wire.turnsPerSecond,
        ratio: after.wire.turnsPerSecond / before.wire.turnsPerSecond,
        note: `p99 ${after.wire.p99Ms} ms vs ${before.wire.p99Ms} ms`,
      });
    } finally {
      await telemetry.shutdown();
    }
  } finally {
    if (saved === undefined) delete process.env['OTEL_EXPORTER_OTLP_ENDPOINT'];
    else process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = saved;
    out.close();
  }
  return figures;
}
