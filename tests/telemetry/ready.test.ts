/**
 * `GET /readyz`'s checks against real stores: a SQLite file whose schema is
 * behind this release fails `migrations`, a closed store fails `store`, a
 * memory store has no schema (`skipped`).
 */
import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { READY_CHECKS, checkReadiness } from '../../src/server/ready.js';
import { MemoryStore, PostgresStore, SqliteStore } from '../../src/store/index.js';
import { PG_URL, dropSchema, freshSchemaName, pgExec, pgReady, warnIfSkipped } from '../store/helpers/pg.js';

const file = () => join(mkdtempSync(join(tmpdir(), 'tally-ready-')), 'tally.db');

describe('checkReadiness', () => {
  it('is ready on a migrated SQLite store and on a memory store (no schema: skipped)', async () => {
    const sqlite = new SqliteStore(file());
    expect(await checkReadiness({ store: sqlite })).toEqual({ ok: true, checks: { store: { state: 'ok' }, migrations: { state: 'ok' }, key: { state: 'skipped' }, replication: { state: 'skipped' }, continuity: { state: 'skipped' }, witnesses: { state: 'skipped' } }, failed: [] });
    await sqlite.close();
    expect(await checkReadiness({ store: new MemoryStore() })).toMatchObject({ ok: true, checks: { migrations: { state: 'skipped' } } });
  });

  it("fails `store` when the store answers reads but its own health check says it cannot commit", async () => {
    // The store contract's health(): a SQLite store after a failed fsync or on a full disk, a
    // PostgreSQL database set read-only (tests/faults drive those for real).
    class CannotCommit extends MemoryStore {
      async health() {
        return { ok: false as const, code: 'TALLY_STORE_IO', message: 'the disk is full' };
      }
    }
    const r = await checkReadiness({ store: new CannotCommit() });
    expect(r.ok).toBe(false);
    expect(r.failed).toEqual(['store']);
    expect(r.checks.store).toEqual({ state: 'failed', reason: 'the store cannot commit (TALLY_STORE_IO)' });
  });

  it('fails `migrations` when the database records an older schema than this release migrates to', async () => {
    const path = file();
    const sqlite = new SqliteStore(path);
    const raw = new Database(path);
    raw.prepare('DELETE FROM tally_schema WHERE version = (SELECT MAX(version) FROM tally_schema)').run();
    raw.close();
    const r = await checkReadiness({ store: sqlite });
    expect(r.ok).toBe(false);
    expect(r.failed).toEqual(['migrations']);
    expect(r.checks.migrations).toMatchObject({ state: 'failed', reason: expect.stringMatching(/^the store's schema is version \d+; this release needs \d+$/) });
    await sqlite.close();
  });

  it('fails `store` (and `migrations`) when the store does not answer, naming the error code only', async () => {
    const sqlite = new SqliteStore(file());
    await sqlite.close();
    const r = await checkReadiness({ store: sqlite, keyPath: '/nonexistent/tally/engine.key' });
    // SQLite does not replicate, and no witnesses are configured: those checks do not apply; a store
    // that does not answer has no position to judge (continuity is skipped, the store check says why).
    expect(r.failed).toEqual(READY_CHECKS.filter((c) => c !== 'replication' && c !== 'witnesses' && c !== 'continuity'));
    expect(r.checks.continuity).toEqual({ state: 'skipped', detail: 'the store does not answer' });
    expect(r.checks.store).toEqual({ state: 'failed', reason: 'the store did not answer a read (TALLY_STORE_CLOSED)' });
    expect(JSON.stringify(r)).not.toContain('/nonexistent');
  });
});

describe.skipIf(!pgReady)('checkReadiness on PostgreSQL', () => {
  warnIfSkipped('tests/telemetry/ready.test.ts');
  it('is ready when migrated, and fails `migrations` when the schema records an older version', async () => {
    const schema = freshSchemaName('ready');
    const store = await PostgresStore.open({ url: PG_URL!, schema, poolSize: 1 });
    try {
      expect(await checkReadiness({ store })).toMatchObject({ ok: true, failed: [] });
      await pgExec(`DELETE FROM ${schema}.tally_schema WHERE version = (SELECT MAX(version) FROM ${schema}.tally_schema)`);
      expect(await checkReadiness({ store })).toMatchObject({ ok: false, failed: ['migrations'] });
    } finally {
      await store.close();
      await dropSchema(schema);
    }
  });
});
