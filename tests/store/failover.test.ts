/**
 * A real PostgreSQL failover (issue #34): a primary and a streaming standby
 * on private ports (tests/store/helpers/pg-cluster.ts), the store opened on
 * the multi-host location `primary,standby?target_session_attrs=read-write`,
 * the primary stopped with `-m immediate` (a crash) and the standby promoted.
 *
 * - Asynchronous, with the standby cut off before the last signatures: the
 *   same store object follows the new primary without a restart, finds its
 *   own last signing-log row gone and refuses (TALLY_SIGN_TIMELINE_CHANGED),
 *   records the refusal, so a restarted store refuses too; `tally operator
 *   acknowledge-failover --confirm` shows the lost session, writes its signed
 *   checkpoint back (that size can never get another root) and lets the
 *   others sign again.
 * - Synchronous (`synchronous_standby_names`): nothing is lost; the store
 *   follows and signs on across the timeline change, its own last row held.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { ContinuityRefusedError, createNotary, generateEngineKey, type Notary } from '../../src/receipt/index.js';
import { PostgresStore } from '../../src/store/index.js';
import { intentDay } from '../receipt/fixtures.js';
import { tally } from '../cli/helpers.js';
import { clusterSkipReason, startCluster, type PgCluster } from './helpers/pg-cluster.js';
import { freshSchemaName } from './helpers/pg.js';

if (clusterSkipReason !== undefined) console.warn(`[failover.test.ts] SKIPPED: ${clusterSkipReason}`);

const key = generateEngineKey('tally.example/desk');
// One cluster at a time (the helper picks its ports by pid): each test destroys its own; this catches a failed one.
const clusters: PgCluster[] = [];
const done = (c: PgCluster): void => {
  clusters.splice(clusters.indexOf(c), 1);
  c.destroy();
};
afterAll(() => {
  for (const c of clusters) c.destroy();
});

const hostList = (c: PgCluster): string => `postgres://postgres@127.0.0.1:${c.primary.port},127.0.0.1:${c.standbys[0]!.port}/postgres?target_session_attrs=read-write`;

/** Waits until the standby has replayed everything the primary wrote so far. */
async function caughtUp(c: PgCluster): Promise<void> {
  const lsn = (await c.primary.sql('SELECT pg_current_wal_lsn()::text AS l')).rows[0].l as string;
  for (let t = 0; t < 300; t++) {
    const r = await c.standbys[0]!.sql(`SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn AS ok`);
    if (r.rows[0].ok === true) return;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('the standby did not catch up');
}

/** Signs, retrying while the pool still holds connections to the crashed primary (TALLY_STORE_IO). */
async function issue(notary: Notary, store: PostgresStore, sid: string, size: number) {
  for (let t = 0; ; t++) {
    try {
      return await notary.issueCheckpoint(createEngine({ store }), sid, size);
    } catch (e) {
      if (t < 40 && e instanceof Error && 'code' in e && e.code === 'TALLY_STORE_IO') {
        await new Promise((res) => setTimeout(res, 250));
        continue;
      }
      throw e;
    }
  }
}

describe.skipIf(clusterSkipReason !== undefined)('a PostgreSQL failover (primary crashed, standby promoted)', () => {
  it('asynchronous, last signatures not replicated: the following store refuses, the refusal outlives a restart, the operator acknowledges what was lost', async () => {
    const c = await startCluster(1);
    clusters.push(c);
    const schema = freshSchemaName('failover');
    const url = hostList(c);
    const store = await PostgresStore.open({ url, schema });
    const notary = createNotary({ key });
    const engine = createEngine({ store });
    const { sid: a } = await intentDay({ engine, name: 'replicated-day' });
    expect((await notary.issueCheckpoint(engine, a, 3)).ok).toBe(true);
    await caughtUp(c);

    // The standby is cut off; the primary goes on: a whole day and its checkpoint exist only there.
    c.standbys[0]!.stop('fast');
    const { sid: b } = await intentDay({ engine, name: 'lost-day', nonceBase: 100 });
    const bSigned = await notary.issueCheckpoint(engine, b);
    expect(bSigned.ok).toBe(true);
    c.primary.stop('immediate');
    c.standbys[0]!.start();
    c.standbys[0]!.promote();

    // The same store object follows the new primary (no restart) and finds its own last row gone.
    const refused = issue(notary, store, a, 4);
    await expect(refused).rejects.toBeInstanceOf(ContinuityRefusedError);
    await expect(refused).rejects.toMatchObject({ code: 'TALLY_SIGN_TIMELINE_CHANGED', message: expect.stringMatching(new RegExp(`recorded tally\\.example/desk/${b} size \\d+ .* no longer holds it`)) });
    const state = await store.continuityState();
    expect(state.current.timeline).toBe(2);
    expect(state.last?.position?.timeline).toBe(1);
    expect(state.events).toMatchObject([{ kind: 'refused', position: { timeline: 2 }, lost: { origin: `${key.name}/${b}` } }]);

    // A restarted engine has no memory of the lost row: the recorded refusal holds it back.
    const restarted = await PostgresStore.open({ url, schema });
    try {
      await expect(issue(notary, restarted, a, 4)).rejects.toMatchObject({ code: 'TALLY_SIGN_TIMELINE_CHANGED', message: expect.stringContaining('signing on this store was refused at') });
    } finally {
      await restarted.close();
    }

    // The operator's check names the lost day; --confirm writes its signed checkpoint back and acknowledges.
    const db = `${url}&schema=${schema}`;
    const dry = tally(['operator', 'acknowledge-failover', '--db', db]);
    expect(dry.code, dry.stderr).toBe(1);
    expect(dry.stdout).toMatch(new RegExp(`short +tally\\.example/desk/${b} size \\d+ \\(refusal; the store holds 0\\)`));
    expect(dry.stdout).toMatch(new RegExp(`held +tally\\.example/desk/${a} size 3 \\(signing-log`));
    const ack = tally(['operator', 'acknowledge-failover', '--db', db, '--confirm', '--reason', 'async failover, day b lost']);
    expect(ack.code, ack.stderr).toBe(1);
    expect(ack.stdout).toContain(`restored       tally.example/desk/${b} size`);

    const after = await PostgresStore.open({ url, schema });
    try {
      expect((await issue(notary, after, a, 4)).ok).toBe(true);
      // The lost day's signed checkpoint is back in the signing log: its size can never be signed with another root.
      expect(await after.latestCheckpoint(`${key.name}/${b}`)).toMatchObject({ size: bSigned.ok ? bSigned.size : 0, root: bSigned.ok ? bSigned.root : '' });
      expect((await after.continuityState()).events.map((e) => e.kind)).toEqual(['refused', 'acknowledged']);
      // The engine that stayed up (its own last row now back in the log) signs on too.
      expect((await issue(notary, store, a, 5)).ok).toBe(true);
    } finally {
      await after.close();
      await store.close();
    }
    done(c);
  }, 170_000);

  it('synchronous: nothing is lost, and the following store signs on across the timeline change', async () => {
    for (const old of [...clusters]) done(old);
    const c = await startCluster(1);
    clusters.push(c);
    await c.primary.sql(`ALTER SYSTEM SET synchronous_standby_names = 'standby1'`);
    await c.primary.sql('SELECT pg_reload_conf()');
    for (let t = 0; t < 200 && (await c.primary.sql(`SELECT sync_state FROM pg_stat_replication`)).rows[0]?.sync_state !== 'sync'; t++) await new Promise((res) => setTimeout(res, 50));
    const schema = freshSchemaName('failover');
    const store = await PostgresStore.open({ url: hostList(c), schema });
    try {
      const notary = createNotary({ key });
      const engine = createEngine({ store });
      const { sid } = await intentDay({ engine, name: 'sync-day' });
      const before = await notary.issueCheckpoint(engine, sid, 5);
      expect(before.ok).toBe(true);
      c.primary.stop('immediate');
      c.standbys[0]!.promote();
      const after = await issue(notary, store, sid, 7);
      expect(after.ok).toBe(true);
      const state = await store.continuityState();
      expect([state.current.timeline, state.last?.position?.timeline, state.events]).toEqual([2, 2, []]);
      // The signature from before the crash is held, and signed again it is the same bytes.
      const again = await issue(notary, store, sid, 5);
      expect(again.ok && before.ok && again.signedCheckpoint === before.signedCheckpoint).toBe(true);
    } finally {
      await store.close();
    }
    done(c);
  }, 120_000);
});
