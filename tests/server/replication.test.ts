/**
 * Readiness reports the replication mode of a PostgreSQL store (issue #34),
 * against a real primary and a real streaming standby (private clusters on
 * their own ports, tests/store/helpers/pg-cluster.ts): while standbys stream
 * but none is synchronous, `/readyz` fails its `replication` check and
 * `tally serve` warns at start — a failover to such a standby lost 801
 * acknowledged appends in the run — unless the operator allows it
 * (`--allow-async-replication`, `$TALLY_ALLOW_ASYNC_REPLICATION=1`). With
 * `synchronous_standby_names` naming the standby it passes; with
 * `synchronous_commit = local` it fails again (commits no longer wait).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkReadiness, replicationCheck } from '../../src/server/ready.js';
import { PostgresStore } from '../../src/store/index.js';
import { clusterSkipReason, startCluster, type PgCluster } from '../store/helpers/pg-cluster.js';
import { PG_URL, freshSchemaName, pgReady } from '../store/helpers/pg.js';
import { cleanup, startServer } from './helpers.js';

if (clusterSkipReason !== undefined) console.warn(`[replication.test.ts] SKIPPED: ${clusterSkipReason}`);

describe.skipIf(clusterSkipReason !== undefined)('replication readiness (a primary and a streaming standby)', () => {
  let cluster: PgCluster;
  let store: PostgresStore;
  let url = '';
  beforeAll(async () => {
    cluster = await startCluster(1);
    url = `${cluster.primary.url}?schema=${freshSchemaName('repl')}`;
    store = await PostgresStore.open({ url: cluster.primary.url, schema: freshSchemaName('repl') });
  }, 180_000);
  afterAll(async () => {
    await store?.close();
    cleanup();
    cluster?.destroy();
  });

  const setSync = async (names: string, commit = 'on'): Promise<void> => {
    await cluster.primary.sql(`ALTER SYSTEM SET synchronous_standby_names = '${names}'`);
    await cluster.primary.sql(`ALTER SYSTEM SET synchronous_commit = '${commit}'`);
    await cluster.primary.sql('SELECT pg_reload_conf()');
    const want = names === '' ? 'async' : 'sync';
    for (let t = 0; t < 200; t++) {
      const r = await cluster.primary.sql(`SELECT sync_state, current_setting('synchronous_commit') AS c FROM pg_stat_replication`);
      const row = r.rows[0] as { sync_state: string; c: string } | undefined;
      if (row?.sync_state === want && row.c === commit) return;
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new Error(`the standby did not become ${want}`);
  };

  it('an asynchronous standby fails the check (and readiness), unless the operator allows it', async () => {
    expect(await store.replication()).toEqual({ standbys: 1, synchronous: 0, synchronousCommit: 'on', protected: false });
    const check = await replicationCheck(store);
    expect(check).toEqual({ state: 'failed', reason: expect.stringContaining('0 of 1 standbys synchronous, synchronous_commit=on: a failover can lose acknowledged entries and signatures') });
    const r = await checkReadiness({ store });
    expect(r).toMatchObject({ ok: false, failed: ['replication'], checks: { store: { state: 'ok' }, migrations: { state: 'ok' } } });
    expect(await replicationCheck(store, true)).toEqual({ state: 'ok', detail: expect.stringContaining('(allowed by the operator)') });
  });

  it('tally serve warns at start and /readyz is 503; --allow-async-replication: no warning, 200', async () => {
    const srv = await startServer({ db: url });
    try {
      await srv.untilStderr((e) => e.includes('standbys exist but none is synchronous'));
      const line = srv.stderr().split('\n').find((l) => l.includes('standbys exist'))!;
      expect(JSON.parse(line)).toMatchObject({ level: 40, event: 'replication' });
      const ready = await fetch(`${srv.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ ok: false, failed: ['replication'] });
    } finally {
      await srv.stop();
    }
    for (const opt of [{ args: ['--allow-async-replication'] }, { env: { TALLY_ALLOW_ASYNC_REPLICATION: '1' } }]) {
      const allowed = await startServer({ db: url, ...opt });
      try {
        const ready = await fetch(`${allowed.url}/readyz`);
        expect(ready.status).toBe(200);
        expect(await ready.json()).toMatchObject({ ok: true, checks: { replication: { state: 'ok', detail: expect.stringContaining('allowed by the operator') } } });
        expect(allowed.stderr()).not.toContain('standbys exist but none is synchronous');
      } finally {
        await allowed.stop();
      }
    }
  }, 120_000);

  it('a synchronous standby passes; synchronous_commit = local fails again', async () => {
    await setSync('standby1');
    try {
      expect(await replicationCheck(store)).toEqual({ state: 'ok', detail: '1 of 1 standbys synchronous, synchronous_commit=on' });
      await setSync('standby1', 'local');
      expect(await replicationCheck(store)).toMatchObject({ state: 'failed', reason: expect.stringContaining('1 of 1 standbys synchronous, synchronous_commit=local') });
    } finally {
      await setSync('', 'on');
    }
  }, 60_000);
});

describe.skipIf(!pgReady)('replication readiness without standbys', () => {
  it('a server with no standbys passes: nothing to fail over to', async () => {
    const store = await PostgresStore.open({ url: PG_URL!, schema: freshSchemaName('norepl') });
    try {
      // The shared test server (TALLY_PG_URL) is a lone server.
      expect(await store.replication()).toEqual({ standbys: 0, synchronous: 0, synchronousCommit: 'on', protected: false });
      expect(await replicationCheck(store)).toEqual({ state: 'ok', detail: 'no standbys' });
    } finally {
      await store.close();
    }
  });
});
