/**
 * Reservations keyed by signer (SQLite migration 5, PostgreSQL migration 9):
 * a store written by the release before them (fixtures/sqlite-v4-names.db,
 * nonces and judge-rate slots keyed by the agent NAME) is migrated so that
 * every nonce used before the upgrade stays used for the same signer and every
 * taken judge-rate slot stays taken for the same wallet — while a session that
 * maps the same name to another signer is no longer affected — and its sealed
 * day still replays byte for byte. Without the migration the first two checks
 * fail: the signer-keyed lookups find nothing.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { replay } from '../../src/receipt/index.js';
import { createRefereeRuler } from '../../src/referee/index.js';
import { nonceKey } from '../../src/rules/spec.js';
import { POSTGRES_MIGRATIONS, PostgresStore, SqliteStore, type TranscriptStore } from '../../src/store/index.js';
import { POSTGRES_V1_SQL, POSTGRES_VERSION_TABLE_SQL } from '../../src/store/postgres/migrations.js';
import { KEY_ALPHA, KEY_BETA, alpha, beta, carry, frameTime, iso, openIntent, signed } from '../rules/fixtures.js';
import { Desk, judgeAccount, localJudge, ruling, signSpecSync } from '../referee/fixtures.js';
import type { SessionSpec } from '../../src/protocol/index.js';
import { PG_URL, dropSchema, freshSchemaName, pgReady, warnIfSkipped } from './helpers/pg.js';
import { tempDir, removeTempDirs } from './helpers/tmp.js';

warnIfSkipped('migrate-keys.test.ts');
afterAll(removeTempDirs);

interface Row { agent_id: string; nonce: string; intent_hash: string; session_id: string; idx: number }
interface Fixture { version: number; sealed: { sid: string; receipt: { receiptRoot: string }; bundle: string }; open: { sid: string }; nonces: Row[] }
const FIXTURE_DIR = new URL('./fixtures/', import.meta.url);
const fixture = JSON.parse(readFileSync(new URL('sqlite-v4-names.json', FIXTURE_DIR), 'utf8')) as Fixture;
const enc = new TextEncoder();

/** The sealed day's mandate, as its genesis holds it (same window, same judge). */
function specOf(name: string, agents: Record<string, string>): SessionSpec {
  const genesis = JSON.parse(fixture.sealed.bundle.split('\n')[0]!) as { spec: { mandate: Record<string, unknown>; intent: unknown } };
  // A day opened after the upgrade: the fixture's mandate, as version 2 and signed by its principal (Anvil #3).
  return signSpecSync({ name, agents, intent: genesis.spec.intent, mandate: { ...genesis.spec.mandate, version: 2 } } as SessionSpec);
}

async function propose(d: Desk, agent: string, nonce: string, key: `0x${string}`) {
  return carry(await signed(openIntent({ agent_id: agent, nonce, ttl: iso(frameTime(d.ordinal) + 1_800_000) }), key), 'ok');
}

async function checkMigrated(store: TranscriptStore): Promise<void> {
  const owner = (r: Row) => ({ intentHash: r.intent_hash, sessionId: r.session_id, index: r.idx });
  const old = (agent: string, nonce: string) => fixture.nonces.find((r) => r.agent_id === agent && r.nonce === nonce)!;
  // Every name-keyed row is there under its signer's key, with the same owner.
  expect(await store.nonceOwner(nonceKey(alpha.address, 'alpha'), 'k1')).toEqual(owner(old('alpha', 'k1')));
  expect(await store.nonceOwner(nonceKey(beta.address, 'beta'), 'b2')).toEqual(owner(old('beta', 'b2')));
  expect(await store.nonceOwner(`judge-wallet 3600000 ${alpha.address.toLowerCase()}`, '525960/1')).toEqual(owner(old('judge-rate 3600000 alpha', '525960/1')));

  // The sealed day replays byte for byte from its bundle.
  const r = await replay([enc.encode(fixture.sealed.bundle)], { ruler: (s) => createRefereeRuler({ store: s, legacyMandates: true }) }); // an auditor replays an old day: its unsigned version-1 mandate is accepted
  expect(r).toMatchObject({ ok: true });
  const lines: string[] = [];
  const { engine } = await Desk.attach(store, fixture.sealed.sid, 0);
  for await (const l of engine.exportEntries(fixture.sealed.sid)) lines.push(new TextDecoder().decode(l));
  expect(lines.join('\n') + '\n').toBe(fixture.sealed.bundle);

  // A new day of the same wallets: alpha's old nonce is still used, alpha's window still full.
  const judge = localJudge();
  const same = await Desk.open(specOf('after-upgrade', { alpha: alpha.address }), { store, judge });
  const replayed = ruling(await same.answer(await propose(same, 'alpha', 'k1', KEY_ALPHA)));
  expect(replayed.intent).toMatchObject({ admitted: false, code: 'replayed_nonce', first: { session: fixture.sealed.sid, index: old('alpha', 'k1').idx } });
  const limited = ruling(await same.answer(await propose(same, 'alpha', 'k9', KEY_ALPHA)));
  expect(limited.verdict).toMatchObject({ source: 'limited', limit: { scope: 'wallet', held: { session: fixture.sealed.sid, index: old('judge-rate 3600000 alpha', '525960/1').idx } } });
  // A desk whose "alpha" is another wallet is touched by neither.
  const other = await Desk.open(specOf('other-desk', { alpha: beta.address, gamma: judgeAccount.address }), { store, judge });
  const fresh = ruling(await other.answer(await propose(other, 'alpha', 'k1', KEY_BETA)));
  expect(fresh.intent).toMatchObject({ admitted: true });
  expect(fresh.verdict).toMatchObject({ source: 'limited', limit: { scope: 'wallet' } }); // beta's wallet had its 2 calls (b1, b2) in the fixture
}

describe('reservations keyed by signer: migrating a store written with name keys', () => {
  it('SQLite: fixtures/sqlite-v4-names.db (schema 4) migrates to signer keys and its sealed day replays byte for byte', async () => {
    expect(fixture.version).toBe(4);
    const file = join(tempDir('migkeys'), 'v4.db');
    copyFileSync(new URL('sqlite-v4-names.db', FIXTURE_DIR), file);
    const store = new SqliteStore(file);
    await checkMigrated(store);
    await store.close();
    const db = new Database(file, { readonly: true });
    // The name-keyed rows remain (history is never rewritten).
    expect(db.prepare("SELECT count(*) AS c FROM nonces WHERE agent_id = 'alpha'").get()).toEqual({ c: 3 });
    db.close();
  });

  describe.skipIf(!pgReady)('PostgreSQL', () => {
    it('the fixture rows laid out by the version-1 SQL migrate forward to signer keys (migration 9)', async () => {
      const schema = freshSchemaName('keys');
      const s = pg.escapeIdentifier(schema);
      try {
        const src = new Database(new URL('sqlite-v4-names.db', FIXTURE_DIR).pathname, { readonly: true });
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
          for (const r of src.prepare('SELECT agent_id, nonce, intent_hash, session_id, idx FROM nonces').all() as Row[]) {
            await c.query(`INSERT INTO ${s}.nonces (agent_id, nonce, intent_hash, session_id, idx) VALUES ($1, $2, $3, $4, $5)`, [r.agent_id, r.nonce, r.intent_hash, r.session_id, r.idx]);
          }
        } finally {
          await c.end();
          src.close();
        }
        const store = await PostgresStore.open({ url: PG_URL!, schema });
        await checkMigrated(store);
        await store.close();
      } finally {
        await dropSchema(schema);
      }
    });
  });
});
