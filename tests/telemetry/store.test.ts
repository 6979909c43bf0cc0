/**
 * Store instrumentation on a real SQLite store: concurrent turns of several
 * sessions are group-committed, and each append's span carries the size of
 * the batch it was committed in (the histogram records each batch); a store
 * failure is counted by its error code and marks the verb's span.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SpanStatusCode } from '@opentelemetry/api';
import { Engine } from '../../src/session/index.js';
import { SqliteStore } from '../../src/store/index.js';
import { ATTR, METRIC, SPAN } from '../../src/telemetry/index.js';
import { installSdk } from './helpers.js';

const enc = new TextEncoder();
const SESSIONS = 8;

describe('SQLite group commit under a registered SDK', async () => {
  const sdk = installSdk();
  afterAll(() => sdk.shutdown());
  const store = new SqliteStore(join(mkdtempSync(join(tmpdir(), 'tally-otel-store-')), 'tally.db'));
  const engine = new Engine({ store });
  const slots: { sessionId: string; ordinal: number; parentHash: string; frameRoot: string }[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const o = await engine.open({ name: `batch-${i}` });
    if (!o.ok) throw new Error(o.message);
    const f = await engine.frame({ sessionId: o.sessionId, ordinal: -1, time: 1_000 });
    if (!f.ok) throw new Error(f.message);
    slots.push({ sessionId: o.sessionId, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot });
  }
  sdk.exporter.reset();
  const results = await Promise.all(slots.map((s, i) => engine.turn({ ...s, body: { kind: 'authored', bytes: enc.encode(`turn ${i}`) } })));

  it('notes the batch size on every append span, each in its own turn trace', async () => {
    expect(results.every((r) => r.ok)).toBe(true);
    const appends = sdk.spans().filter((s) => s.name === SPAN.append);
    expect(appends).toHaveLength(SESSIONS);
    const sizes = appends.map((s) => s.attributes[ATTR.batch] as number);
    expect(Math.max(...sizes)).toBeGreaterThan(1);
    // Each batch size is the number of appends that share it.
    const bySize = new Map<number, number>();
    for (const n of sizes) bySize.set(n, (bySize.get(n) ?? 0) + 1);
    for (const [size, count] of bySize) expect(count % size).toBe(0);
    expect(new Set(appends.map((s) => s.spanContext().traceId)).size).toBe(SESSIONS);
    // The histogram has one record per committed batch (the frames went one by one) and sums to every append.
    let batches = SESSIONS;
    for (const [size, count] of bySize) batches += count / size;
    const [h] = await sdk.points(METRIC.batchSize);
    expect(h!.value).toMatchObject({ count: batches, sum: 2 * SESSIONS });
  });

  it('counts a store failure by its code and marks the verb span as an error', async () => {
    await store.close();
    await expect(engine.events(slots[0]!.sessionId)).rejects.toMatchObject({ code: 'TALLY_STORE_CLOSED' });
    expect(await sdk.sum(METRIC.storeErrors, { kind: 'TALLY_STORE_CLOSED' })).toBe(1);
    const failed = sdk.spans().find((s) => s.name === SPAN.verb('events'))!;
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: 'TALLY_STORE_CLOSED' });
    expect(failed.attributes[ATTR.errorKind]).toBe('TALLY_STORE_CLOSED');
    expect(await sdk.sum(METRIC.verbDuration, { verb: 'events', result: 'error' })).toBe(1);
  });
});
