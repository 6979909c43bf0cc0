/**
 * Numbered migrations: a database written by the FIRST schema version opens
 * with the current code, is migrated forward, re-derives cleanly and keeps
 * working; a database from a newer release is refused; concurrent openers of
 * a fresh Postgres schema migrate it exactly once.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import { createEngine, type Engine } from '../../src/session/index.js';
import {
  POSTGRES_MIGRATIONS,
  POSTGRES_SCHEMA_VERSION,
  PostgresStore,
  SQLITE_MIGRATIONS,
  SQLITE_SCHEMA_VERSION,
  SqliteStore,
  type TranscriptStore,
} from '../../src/store/index.js';
import { POSTGRES_V1_SQL, POSTGRES_VERSION_TABLE_SQL } from '../../src/store/postgres/migrations.js';
import { PG_URL, dropSchema, freshSchemaName, pgExec, pgReady, warnIfSkipped } from './helpers/pg.js';
import { tempDir, removeTempDirs } from './helpers/tmp.js';

warnIfSkipped('migrate.test.ts');
afterAll(removeTempDirs);

interface Fixture {
  sealed: { sessionId: string; receipt: { sessionId: string; size: number; receiptRoot: string; head: string } };
  open: { sessionId: string; pending: { ordinal: number; entryHash: string; frameRoot: string } };
  sessions: { id: string; size: number; head: string; phase: string }[];
  nonces: { agentId: string; nonce: string; owner: { intentHash: string; sessionId: string; index: number } }[];
}
const FIXTURE_DIR = new URL('./fixtures/', import.meta.url);
const fixture = JSON.parse(readFileSync(new URL('sqlite-v1.json', FIXTURE_DIR), 'utf8')) as Fixture;

async function exportBundle(engine: Engine, sid: string): Promise<Uint8Array> {
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) lines.push(l);
  return encodeBundle(lines);
}

/** What every migrated store must still say and do. */
async function checkFixtureStore(store: TranscriptStore): Promise<void> {
  expect(await store.listSessions()).toEqual(fixture.sessions.map((s) => s.id));
  for (const n of fixture.nonces) expect(await store.nonceOwner(n.agentId, n.nonce)).toEqual(n.owner);
  const engine = createEngine({ store });
  // The sealed day re-derives to the receipt the first version issued.
  const d = await engine.describe(fixture.sealed.sessionId);
  expect(d.ok && d.receipt).toEqual(fixture.sealed.receipt);
  const v = await verifyBundle([await exportBundle(engine, fixture.sealed.sessionId)]);
  expect(v.ok && v.receiptRoot).toBe(fixture.sealed.receipt.receiptRoot);
  // The open day resumes at its pending frame and can be finished.
  const o = await engine.describe(fixture.open.sessionId);
  expect(o.ok && o.pending).toMatchObject(fixture.open.pending);
  const sid = fixture.open.sessionId;
  const t = await engine.turn({ sessionId: sid, ordinal: -1, parentHash: fixture.open.pending.entryHash, frameRoot: fixture.open.pending.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
  expect(t.ok && !t.duplicate).toBe(true);
  const fin = await engine.finalize(sid);
  expect(fin.ok).toBe(true);
  expect((await verifyBundle([await exportBundle(engine, sid)])).ok).toBe(true);
}

describe('SQLite migrations', () => {
  it('opens the committed version-1 database (fixtures/sqlite-v1.db), migrates it to the current version and keeps using it', async () => {
    const file = join(tempDir('mig'), 'v1.db');
    copyFileSync(new URL('sqlite-v1.db', FIXTURE_DIR), file);
    const raw = new Database(file, { readonly: true });
    expect(raw.prepare('SELECT version FROM tally_schema').all()).toEqual([{ version: 1 }]);
    raw.close();
    const store = new SqliteStore(file);
    expect(store.schemaVersion()).toBe(SQLITE_SCHEMA_VERSION);
    expect(SQLITE_SCHEMA_VERSION).toBeGreaterThan(1);
    await checkFixtureStore(store);
    await store.close();
    // Reopening does not migrate again; the v2 triggers now guard history.
    const again = new SqliteStore(file);
    expect(again.schemaVersion()).toBe(SQLITE_SCHEMA_VERSION);
    await again.close();
    const db = new Database(file);
    expect(db.prepare('SELECT version FROM tally_schema ORDER BY version').all()).toEqual(SQLITE_MIGRATIONS.map((m) => ({ version: m.version })));
    expect(() => db.prepare('UPDATE entries SET hash = ? WHERE idx = 0').run('00'.repeat(32))).toThrow(/immutable/);
    db.close();
  });

  it('refuses a database written by a newer release (TALLY_STORE_SCHEMA_TOO_NEW)', async () => {
    const file = join(tempDir('mig'), 'new.db');
    await new SqliteStore(file).close();
    const db = new Database(file);
    db.prepare("INSERT INTO tally_schema (version, name, applied_at) VALUES (99, 'future', 'x')").run();
    db.close();
    expect(() => new SqliteStore(file)).toThrow(expect.objectContaining({ code: 'TALLY_STORE_SCHEMA_TOO_NEW' }));
  });
});

describe.skipIf(!pgReady)('PostgreSQL migrations', () => {
  it('opens a schema written by the version-1 SQL (kept verbatim) and migrates it forward', async () => {
    const schema = freshSchemaName('v1');
    const s = pg.escapeIdentifier(schema);
    try {
      // Lay out version 1 exactly as its code did, then copy the fixture's rows in.
      const src = new Database(new URL('sqlite-v1.db', FIXTURE_DIR).pathname, { readonly: true });
      const c = new pg.Client({ connectionString: PG_URL! });
      await c.connect();
      try {
        await c.query(`CREATE SCHEMA ${s}`);
        await c.query(POSTGRES_VERSION_TABLE_SQL(s));
        await c.query(POSTGRES_V1_SQL(s));
        await c.query(`INSERT INTO ${s}.tally_schema (version, name) VALUES (1, $1)`, [POSTGRES_MIGRATIONS[0]!.name]);
        for (const r of src.prepare('SELECT id, size, head, frontier, phase FROM sessions ORDER BY seq').all() as { id: string; size: number; head: string; frontier: string; phase: string }[]) {
          await c.query(`INSERT INTO ${s}.sessions (id, size, head, frontier, phase) VALUES ($1, $2, $3, $4, $5)`, [r.id, r.size, r.head, JSON.parse(r.frontier), r.phase]);
        }
        for (const r of src.prepare('SELECT session_id, idx, hash, kind, ordinal, bytes FROM entries').all() as { session_id: string; idx: number; hash: string; kind: string; ordinal: number | null; bytes: Buffer }[]) {
          await c.query(`INSERT INTO ${s}.entries (session_id, idx, hash, kind, ordinal, bytes) VALUES ($1, $2, $3, $4, $5, $6)`, [r.session_id, r.idx, r.hash, r.kind, r.ordinal, r.bytes]);
        }
        for (const r of src.prepare('SELECT agent_id, nonce, intent_hash, session_id, idx FROM nonces').all() as Record<string, unknown>[]) {
          await c.query(`INSERT INTO ${s}.nonces (agent_id, nonce, intent_hash, session_id, idx) VALUES ($1, $2, $3, $4, $5)`, [r.agent_id, r.nonce, r.intent_hash, r.session_id, r.idx]);
        }
      } finally {
        await c.end();
        src.close();
      }
      const store = await PostgresStore.open({ url: PG_URL!, schema });
      expect(await store.schemaVersion()).toBe(POSTGRES_SCHEMA_VERSION);
      await checkFixtureStore(store);
      await store.close();
      await expect(pgExec(`DELETE FROM ${s}.entries`)).rejects.toThrow(/immutable/);
      // Version 7 moved the entry rules from table CHECKs to domains: they refuse all the same.
      await expect(pgExec(`INSERT INTO ${s}.entries (session_id, idx, hash, kind, bytes) VALUES ('x', -1, 'h', 'turn', '\\x00')`)).rejects.toThrow(/entry_index_check/);
      await expect(pgExec(`INSERT INTO ${s}.entries (session_id, idx, hash, kind, bytes) VALUES ('x', 5, 'h', 'bogus', '\\x00')`)).rejects.toThrow(/entry_kind_check/);
      await expect(pgExec(`INSERT INTO ${s}.entries (session_id, idx, hash, kind, bytes) VALUES ('x', 5, 'h', 'turn', '\\x00')`)).resolves.toMatchObject({ rowCount: 1 });
      // Version 8: TRUNCATE, which fires no row trigger, is refused on every table of history.
      for (const table of ['entries', 'nonces', 'sessions', 'signed_checkpoints', 'cosignatures', 'witness_sizes']) {
        await expect(pgExec(`TRUNCATE ${s}.${table} CASCADE`), table).rejects.toThrow(`tally: TRUNCATE ${table} refused: history is immutable`);
      }
    } finally {
      await dropSchema(schema);
    }
  });

  it('six concurrent openers (one connection each) migrate a fresh schema exactly once (pg_advisory_xact_lock)', async () => {
    const schema = freshSchemaName('race');
    try {
      const stores = await Promise.all(Array.from({ length: 6 }, () => PostgresStore.open({ url: PG_URL!, schema, poolSize: 1 })));
      const r = await pgExec(`SELECT version FROM ${pg.escapeIdentifier(schema)}.tally_schema ORDER BY version`);
      expect(r.rows).toEqual(POSTGRES_MIGRATIONS.map((m) => ({ version: m.version })));
      await Promise.all(stores.map((st) => st.close()));
    } finally {
      await dropSchema(schema);
    }
  });

  it('refuses a schema written by a newer release (TALLY_STORE_SCHEMA_TOO_NEW)', async () => {
    const schema = freshSchemaName('new');
    try {
      await (await PostgresStore.open({ url: PG_URL!, schema })).close();
      await pgExec(`INSERT INTO ${pg.escapeIdentifier(schema)}.tally_schema (version, name) VALUES (99, 'future')`);
      await expect(PostgresStore.open({ url: PG_URL!, schema })).rejects.toMatchObject({ code: 'TALLY_STORE_SCHEMA_TOO_NEW' });
    } finally {
      await dropSchema(schema);
    }
  });
});
