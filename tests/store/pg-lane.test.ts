/**
 * The PostgreSQL store's held connection for lone appends (`src/store/postgres/lane.ts`),
 * on a real server: it holds exactly one pooled connection from its first
 * statement until it closes, a busy lane sends work to the pool, a server
 * that ends the connection (idle or under a statement) costs at most the
 * statement that met it and never the process, a refused statement keeps the
 * connection, and a store of one connection has no lane.
 */
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TallyError } from '../../src/protocol/errors.js';
import { createEngine } from '../../src/session/index.js';
import { PostgresStore } from '../../src/store/index.js';
import { Lane } from '../../src/store/postgres/lane.js';
import { PG_URL, dropSchema, freshSchemaName, pgExec, pgReady, warnIfSkipped } from './helpers/pg.js';

warnIfSkipped('pg-lane.test.ts');

let apps = 0;
/** A URL whose connections carry their own application_name, so the test can find and end them. */
function tagged(): { url: string; app: string } {
  const app = `tally_lane_${process.pid}_${++apps}`;
  const url = new URL(PG_URL!);
  url.searchParams.set('application_name', app);
  return { url: url.toString(), app };
}

const pools: pg.Pool[] = [];
afterEach(async () => {
  for (const p of pools.splice(0)) await p.end();
});
const schemas: string[] = [];
afterAll(async () => {
  for (const s of schemas) await dropSchema(s);
});

function pool(max: number, url = PG_URL!): pg.Pool {
  const p = new pg.Pool({ connectionString: url, max });
  p.on('error', () => {});
  pools.push(p);
  return p;
}

const checkedOut = (p: pg.Pool): number => p.totalCount - p.idleCount;
const pidOf = async (on: pg.Pool | pg.PoolClient): Promise<number> => ((await on.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);

async function waitFor(what: string, cond: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 250; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** Ends server process `pid` and waits until it is gone. */
async function terminate(pid: number): Promise<void> {
  await pgExec('SELECT pg_terminate_backend($1)', [pid]);
  await waitFor(`backend ${pid} is gone`, async () => (await pgExec('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0);
}

describe.skipIf(!pgReady)('PostgreSQL lone-append lane', () => {
  it('holds one pooled connection from its first statement until it closes, and runs every statement there', async () => {
    const p = pool(3);
    const lane = new Lane(p, true);
    expect(checkedOut(p)).toBe(0);
    const pid = await lane.run(pidOf);
    expect(checkedOut(p)).toBe(1);
    for (let i = 0; i < 5; i++) expect(await lane.run(pidOf)).toBe(pid);
    lane.close();
    expect(checkedOut(p)).toBe(0);
    // Closed: later statements go through the pool, and nothing is held again.
    await lane.run(pidOf);
    expect(checkedOut(p)).toBe(0);
  });

  it('while busy it sends the next statement to the pool; disabled, it holds nothing', async () => {
    const p = pool(3);
    const lane = new Lane(p, true);
    const held = await lane.run(pidOf);
    const slow = lane.run(async (on) => (await on.query('SELECT pg_sleep(0.3)'), pidOf(on)));
    const other = await lane.run(pidOf);
    expect(other).not.toBe(held);
    expect(await slow).toBe(held);
    lane.close();

    const q = pool(2);
    const off = new Lane(q, false);
    await off.run(pidOf);
    expect(checkedOut(q)).toBe(0);
  });

  it('a refused statement or a store error keeps the connection; a lost connection is replaced', async () => {
    const p = pool(3);
    const lane = new Lane(p, true);
    const pid = await lane.run(pidOf);
    await expect(lane.run((on) => on.query('SELECT 1 / 0'))).rejects.toMatchObject({ code: '22012' });
    await expect(lane.run((on) => on.query("SET statement_timeout = 50; SELECT pg_sleep(1)"))).rejects.toMatchObject({ code: '57014' });
    await lane.run((on) => on.query('RESET statement_timeout'));
    await expect(lane.run(async () => Promise.reject(new TallyError('TALLY_STORE_IO', 'a bad answer')))).rejects.toMatchObject({ code: 'TALLY_STORE_IO' });
    expect(await lane.run(pidOf)).toBe(pid);

    // Ended while idle: the connection's error event gives it back as broken, and the next statement takes a fresh one.
    await terminate(pid);
    await waitFor('the pool closed the ended connection', async () => p.totalCount === 0);
    const second = await lane.run(pidOf);
    expect(second).not.toBe(pid);
    expect(checkedOut(p)).toBe(1);

    // Ended under a statement: that statement fails, and the next one runs on a fresh connection.
    const sleeping = lane.run((on) => on.query('SELECT pg_sleep(10)'));
    const failed = sleeping.then(() => undefined, (e: unknown) => e);
    await waitFor('the lane is in pg_sleep', async () => (await pgExec("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND query LIKE 'SELECT pg_sleep%' AND state = 'active'", [second])).rowCount === 1);
    await terminate(second);
    expect(await failed).toBeInstanceOf(Error);
    const third = await lane.run(pidOf);
    expect([pid, second]).not.toContain(third);
    expect(checkedOut(p)).toBe(1);
    lane.close();
    expect(checkedOut(p)).toBe(0);
  });

  it('through the store: appends go on after the server ended every connection, and a store of one connection has no lane', async () => {
    for (const poolSize of [2, 1]) {
      const schema = freshSchemaName('lane');
      schemas.push(schema);
      const { url, app } = tagged();
      const store = await PostgresStore.open({ url, schema, poolSize });
      try {
        const engine = createEngine({ store });
        const open = await engine.open({ name: `lane-${poolSize}-${process.pid}`, day: '2026-12-01', nonce: app });
        if (!open.ok) throw new Error(open.message);
        const sid = open.sessionId;
        const step = async (ord: number): Promise<void> => {
          const f = await engine.frame({ sessionId: sid, ordinal: ord, time: 1_000 * (ord + 2), data: { ord } });
          if (!f.ok) throw new Error(f.message);
          const t = await engine.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
          if (!t.ok) throw new Error(t.message);
        };
        await step(-1);
        await step(0);
        const pids = (await pgExec('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [app])).rows as { pid: number }[];
        expect(pids.length).toBeGreaterThanOrEqual(1);
        if (poolSize === 1) expect(pids).toHaveLength(1);
        for (const { pid } of pids) await terminate(pid);
        await new Promise((r) => setTimeout(r, 100));
        await step(1);
        await step(2);
        expect((await store.loadHead(sid))?.size).toBe(1 + 2 * 4);
      } finally {
        await store.close();
      }
    }
  });
});
