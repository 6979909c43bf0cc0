/**
 * The PostgreSQL store's held connection for lone appends (`src/store/postgres/lane.ts`):
 * it is really held and really given back, a server that ends it (idle or
 * under a statement) costs at most the statement that met the failure and
 * never the process, and a store of one connection has no lane.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/session/index.js';
import { PostgresStore } from '../../src/store/index.js';
import { PG_URL, dropSchema, freshSchemaName, pgExec, pgReady, warnIfSkipped } from './helpers/pg.js';

warnIfSkipped('pg-lane.test.ts');

const schemas: string[] = [];
afterAll(async () => {
  for (const s of schemas) await dropSchema(s);
});

/** A store whose connections carry their own application_name, so the test can find and end them. */
async function openStore(poolSize: number): Promise<{ store: PostgresStore; app: string }> {
  const schema = freshSchemaName('lane');
  schemas.push(schema);
  const app = `tally_lane_${process.pid}_${schemas.length}`;
  const url = new URL(PG_URL!);
  url.searchParams.set('application_name', app);
  return { store: await PostgresStore.open({ url: url.toString(), schema, poolSize }), app };
}

async function backends(app: string): Promise<{ pid: number; state: string | null }[]> {
  return (await pgExec('SELECT pid, state FROM pg_stat_activity WHERE application_name = $1', [app])).rows as { pid: number; state: string | null }[];
}

/** Ends every server process of `app` and waits until they are gone. */
async function endBackends(app: string): Promise<void> {
  await pgExec('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [app]);
  for (let i = 0; i < 100 && (await backends(app)).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
  expect(await backends(app)).toEqual([]);
}

/** Opens a day and answers `frames` frames, each append alone. */
async function drive(store: PostgresStore, name: string, frames: number): Promise<{ sessionId: string; next: () => Promise<boolean> }> {
  const engine = createEngine({ store });
  const open = await engine.open({ name, day: '2026-12-01', nonce: name });
  if (!open.ok) throw new Error(open.message);
  const sessionId = open.sessionId;
  let ord = -1;
  const next = async (): Promise<boolean> => {
    const f = await engine.frame({ sessionId, ordinal: ord, time: 1_000 * (ord + 2), data: { ord } });
    if (!f.ok) return false;
    const t = await engine.turn({ sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
    if (!t.ok) return false;
    ord++;
    return true;
  };
  for (let i = 0; i < frames; i++) expect(await next()).toBe(true);
  return { sessionId, next };
}

describe.skipIf(!pgReady)('PostgreSQL lone-append lane', () => {
  it('holds one connection while the store is open and gives it back on close', async () => {
    const { store, app } = await openStore(3);
    await drive(store, `lane-held-${process.pid}`, 3);
    // The pool's idle connections come and go; the lane is the connection that stays checked out.
    expect((await backends(app)).length).toBeGreaterThanOrEqual(1);
    await store.close();
    for (let i = 0; i < 100 && (await backends(app)).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await backends(app)).toEqual([]);
  });

  it('a lane the server ended while idle is replaced before the next append, and the process lives on', async () => {
    const { store, app } = await openStore(2);
    try {
      const day = await drive(store, `lane-idle-${process.pid}`, 2);
      await endBackends(app);
      // The ended connection's error event reached the lane (no uncaught 'error'), so the next append takes a fresh one.
      await new Promise((r) => setTimeout(r, 200));
      expect(await day.next()).toBe(true);
      expect(await day.next()).toBe(true);
      expect((await store.loadHead(day.sessionId))?.size).toBe(1 + 2 * 4);
    } finally {
      await store.close();
    }
  });

  it('a lane ended under its statement fails that append only, as a store error; the next goes through', async () => {
    const { store, app } = await openStore(2);
    try {
      const day = await drive(store, `lane-busy-${process.pid}`, 1);
      // End the server processes while an append is in flight on the lane.
      const pending = day.next().then(
        (ok) => ({ ok, error: undefined as unknown }),
        (error: unknown) => ({ ok: false, error }),
      );
      await endBackends(app);
      const first = await pending;
      if (first.error !== undefined) expect(first.error).toMatchObject({ code: 'TALLY_STORE_IO' });
      const head = await store.loadHead(day.sessionId);
      expect(head?.phase).toBeDefined();
      // Whatever the in-flight append did, the day goes on from the stored head.
      const resumed = await drive(store, `lane-busy-again-${process.pid}`, 2);
      expect(await resumed.next()).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('a store of one connection has no lane: reads and appends share it', async () => {
    const { store, app } = await openStore(1);
    try {
      const day = await drive(store, `lane-none-${process.pid}`, 3);
      expect((await store.loadHead(day.sessionId))?.size).toBe(1 + 2 * 3);
      expect((await backends(app)).length).toBe(1);
    } finally {
      await store.close();
    }
  });
});
