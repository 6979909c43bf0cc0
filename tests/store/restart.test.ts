/**
 * An engine restarted on the same database resumes every open session:
 * pending frame, head, Merkle frontier (root), counts and receipts are
 * re-derived from the stored rows, and the days continue where they stopped.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import { createEngine, type Engine } from '../../src/session/index.js';
import { PostgresStore, SqliteStore, type TranscriptStore } from '../../src/store/index.js';
import { PG_URL, dropSchema, freshSchemaName, pgReady, warnIfSkipped } from './helpers/pg.js';
import { removeTempDirs, tempDir } from './helpers/tmp.js';

warnIfSkipped('restart.test.ts');
afterAll(removeTempDirs);

const enc = new TextEncoder();
const ok = <T extends { ok: boolean }>(r: T): Extract<T, { ok: true }> => {
  if (!r.ok) throw new Error(JSON.stringify(r));
  return r as Extract<T, { ok: true }>;
};

async function bundle(engine: Engine, sid: string): Promise<Uint8Array> {
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) lines.push(l);
  return encodeBundle(lines);
}

/** Leaves four sessions in four states; returns their ids. */
async function before(engine: Engine): Promise<{ pending: string; awaiting: string; sealed: string; fresh: string }> {
  const pending = ok(await engine.open({ name: 'pending', day: '2026-11-30' })).sessionId;
  for (let ord = -1; ord < 2; ord++) {
    const f = ok(await engine.frame({ sessionId: pending, ordinal: ord, time: 1000 + ord * 10 + 10, data: { ord } }));
    ok(await engine.turn({ sessionId: pending, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`a${ord}`) } }));
  }
  ok(await engine.frame({ sessionId: pending, ordinal: 2, time: 5000, data: { waiting: true } }));
  const awaiting = ok(await engine.open({ name: 'awaiting', day: '2026-11-30' })).sessionId;
  const f = ok(await engine.frame({ sessionId: awaiting, ordinal: -1, time: 7 }));
  ok(await engine.turn({ sessionId: awaiting, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } }));
  const sealed = ok(await engine.open({ name: 'sealed', day: '2026-11-30' })).sessionId;
  ok(await engine.finalize(sealed, { why: 'empty day' }));
  const fresh = ok(await engine.open({ name: 'fresh', day: '2026-11-30' })).sessionId;
  return { pending, awaiting, sealed, fresh };
}

async function restartScenario(open: () => Promise<TranscriptStore>): Promise<void> {
  const s1 = await open();
  const e1 = createEngine({ store: s1 });
  const ids = await before(e1);
  const described = new Map<string, unknown>();
  for (const sid of Object.values(ids)) described.set(sid, await e1.describe(sid));
  await s1.close();

  const s2 = await open();
  const e2 = createEngine({ store: s2 });
  expect(await s2.listSessions()).toEqual([ids.pending, ids.awaiting, ids.sealed, ids.fresh]);
  for (const sid of Object.values(ids)) expect(await e2.describe(sid)).toEqual(described.get(sid));

  // The pending frame is answered; a retry of an earlier turn is still a duplicate.
  const d = ok(await e2.describe(ids.pending));
  expect(d.pending?.ordinal).toBe(2);
  const t = ok(await e2.turn({ sessionId: ids.pending, ordinal: 2, parentHash: d.pending!.entryHash, frameRoot: d.pending!.frameRoot, body: { kind: 'authored', bytes: enc.encode('after restart') } }));
  expect(t.duplicate).toBe(false);
  expect(t.index).toBe(d.size);
  // The awaiting day takes its next frame on the stored head.
  const a = ok(await e2.describe(ids.awaiting));
  const f = ok(await e2.frame({ sessionId: ids.awaiting, ordinal: 0, time: 8, parentHash: a.head }));
  expect(f.index).toBe(a.size);
  // The sealed day answers its finalize retry with the same receipt.
  const sealed = ok(await e2.describe(ids.sealed));
  const again = ok(await e2.finalize(ids.sealed, { why: 'empty day' }));
  expect(again).toEqual({ ok: true, receipt: sealed.receipt, duplicate: true });
  // The fresh day accepts its OPEN frame.
  ok(await e2.frame({ sessionId: ids.fresh, ordinal: -1, time: 1 }));

  for (const sid of [ids.pending, ids.awaiting]) {
    const pre = ok(await e2.describe(sid));
    if (pre.pending) ok(await e2.turn({ sessionId: sid, ordinal: pre.pending.ordinal, parentHash: pre.pending.entryHash, frameRoot: pre.pending.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } }));
    const fin = ok(await e2.finalize(sid));
    const v = await verifyBundle([await bundle(e2, sid)]);
    expect(v.ok && v.receiptRoot).toBe(fin.receipt.receiptRoot);
  }
  await s2.close();
}

describe('restart on the same database', () => {
  it('SQLite: a new engine resumes every session (pending frame, head, frontier, receipt)', async () => {
    const file = join(tempDir('restart'), 'r.db');
    await restartScenario(async () => new SqliteStore(file));
  });

  it.skipIf(!pgReady)('PostgreSQL: a new engine resumes every session (pending frame, head, frontier, receipt)', async () => {
    const schema = freshSchemaName('restart');
    try {
      await restartScenario(() => PostgresStore.open({ url: PG_URL!, schema, poolSize: 2 }));
    } finally {
      await dropSchema(schema);
    }
  });
});
