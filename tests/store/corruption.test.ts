/**
 * Readers never trust the store: a row changed behind the engine's back with
 * plain SQL is refused as StoreCorruptionError naming the entry index, by
 * every read path (reload, events, export) — never served. The schema's
 * immutability triggers refuse such changes in the first place; the tamperer
 * here drops them first.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine, StoreCorruptionError } from '../../src/session/index.js';
import { PostgresStore, SqliteStore, type TranscriptStore } from '../../src/store/index.js';
import { runDay } from '../helpers/day.js';
import { PG_URL, dropSchema, freshSchemaName, pgExec, pgReady, warnIfSkipped } from './helpers/pg.js';
import { removeTempDirs, tempDir } from './helpers/tmp.js';

warnIfSkipped('corruption.test.ts');
afterAll(removeTempDirs);

/** A tampering, applied with raw SQL to entry `index` of session `sid`. */
interface Tamper {
  readonly what: string;
  readonly index: number;
  readonly sqlite: (db: Database.Database, sid: string) => void;
  readonly pg: (s: string, sid: string) => Promise<unknown>;
}

function flip(bytes: Uint8Array): Buffer {
  const b = Buffer.from(bytes);
  // Change one digit inside the entry (the JSON stays well-formed).
  const at = b.indexOf('"time":') + 8;
  b[at] = b[at] === 0x31 ? 0x32 : 0x31;
  return b;
}

const TAMPERS: readonly Tamper[] = [
  {
    what: 'one byte of an entry changed',
    index: 3,
    sqlite: (db, sid) => {
      const row = db.prepare('SELECT bytes FROM entries WHERE session_id = ? AND idx = 3').get(sid) as { bytes: Buffer };
      db.exec('DROP TRIGGER entries_immutable_update');
      db.prepare('UPDATE entries SET bytes = ? WHERE session_id = ? AND idx = 3').run(flip(row.bytes), sid);
    },
    pg: async (s, sid) => {
      const r = await pgExec(`SELECT bytes FROM ${s}.entries WHERE session_id = $1 AND idx = 3`, [sid]);
      await pgExec(`ALTER TABLE ${s}.entries DISABLE TRIGGER entries_immutable`);
      await pgExec(`UPDATE ${s}.entries SET bytes = $2 WHERE session_id = $1 AND idx = 3`, [sid, flip(r.rows[0].bytes as Buffer)]);
    },
  },
  {
    what: 'a stored hash replaced',
    index: 2,
    sqlite: (db, sid) => {
      db.exec('DROP TRIGGER entries_immutable_update');
      db.prepare('UPDATE entries SET hash = ? WHERE session_id = ? AND idx = 2').run('ab'.repeat(32), sid);
    },
    pg: async (s, sid) => {
      await pgExec(`ALTER TABLE ${s}.entries DISABLE TRIGGER entries_immutable`);
      await pgExec(`UPDATE ${s}.entries SET hash = $2 WHERE session_id = $1 AND idx = 2`, [sid, 'ab'.repeat(32)]);
    },
  },
  {
    what: 'an entry deleted from the middle',
    index: 4,
    sqlite: (db, sid) => {
      db.exec('DROP TRIGGER entries_immutable_delete');
      db.prepare('DELETE FROM entries WHERE session_id = ? AND idx = 4').run(sid);
    },
    pg: async (s, sid) => {
      await pgExec(`ALTER TABLE ${s}.entries DISABLE TRIGGER entries_immutable`);
      await pgExec(`DELETE FROM ${s}.entries WHERE session_id = $1 AND idx = 4`, [sid]);
    },
  },
];

/** Every read path refuses the session, naming `index`. */
async function expectRefused(store: TranscriptStore, sid: string, index: number): Promise<void> {
  const engine = createEngine({ store });
  const refused = expect.objectContaining({ name: 'StoreCorruptionError', code: 'TALLY_STORE_CORRUPT', index, sessionId: sid });
  await expect(engine.describe(sid)).rejects.toThrow(StoreCorruptionError);
  await expect(engine.describe(sid)).rejects.toEqual(refused);
  await expect(engine.frame({ sessionId: sid, ordinal: 9, time: 9_999_999 })).rejects.toEqual(refused);
  if (index !== 4) {
    // events/export check each row they serve (a missing row shows up at reload).
    await expect(engine.events(sid)).rejects.toEqual(refused);
    await expect((async () => { for await (const _ of engine.exportEntries(sid)); })()).rejects.toEqual(refused);
  }
}

describe('SQLite: a row corrupted with SQL is refused by entry index', () => {
  for (const t of TAMPERS) {
    it(`${t.what} → StoreCorruptionError at entry ${t.index}`, async () => {
      const file = join(tempDir('corrupt'), 'c.db');
      const store = new SqliteStore(file);
      const { sid } = await runDay({ engine: createEngine({ store }), wakes: 3 });
      await store.close();
      const db = new Database(file);
      t.sqlite(db, sid);
      db.close();
      const reopened = new SqliteStore(file);
      await expectRefused(reopened, sid, t.index);
      await reopened.close();
    });
  }

  it('the schema itself refuses to update or delete entries and nonces, or to move a sealed head', async () => {
    const file = join(tempDir('corrupt'), 'g.db');
    const store = new SqliteStore(file);
    const { sid } = await runDay({ engine: createEngine({ store }), wakes: 1 });
    await store.close();
    const db = new Database(file);
    expect(() => db.prepare('UPDATE entries SET hash = ? WHERE session_id = ?').run('00', sid)).toThrow(/immutable/);
    expect(() => db.prepare('DELETE FROM entries WHERE session_id = ?').run(sid)).toThrow(/immutable/);
    expect(() => db.prepare('UPDATE sessions SET size = size + 1 WHERE id = ?').run(sid)).toThrow(/sealed session is immutable/);
    expect(() => db.prepare('DELETE FROM sessions').run()).toThrow(/never deleted/);
    db.prepare("INSERT INTO nonces VALUES ('a', 'n', 'h', ?, 1)").run(sid);
    expect(() => db.prepare("DELETE FROM nonces WHERE agent_id = 'a'").run()).toThrow(/immutable/);
    db.close();
  });
});

describe.skipIf(!pgReady)('PostgreSQL: a row corrupted with SQL is refused by entry index', () => {
  for (const t of TAMPERS) {
    it(`${t.what} → StoreCorruptionError at entry ${t.index}`, async () => {
      const schema = freshSchemaName('corrupt');
      try {
        const store = await PostgresStore.open({ url: PG_URL!, schema, poolSize: 2 });
        const { sid } = await runDay({ engine: createEngine({ store }), wakes: 3 });
        await store.close();
        await t.pg(pg.escapeIdentifier(schema), sid);
        const reopened = await PostgresStore.open({ url: PG_URL!, schema, poolSize: 2 });
        await expectRefused(reopened, sid, t.index);
        await reopened.close();
      } finally {
        await dropSchema(schema);
      }
    });
  }

  it('the schema itself refuses to update or delete entries, nonces and sessions', async () => {
    const schema = freshSchemaName('guard');
    const s = pg.escapeIdentifier(schema);
    try {
      const store = await PostgresStore.open({ url: PG_URL!, schema, poolSize: 2 });
      const { sid } = await runDay({ engine: createEngine({ store }), wakes: 1 });
      await store.close();
      await expect(pgExec(`UPDATE ${s}.entries SET hash = '00' WHERE session_id = $1`, [sid])).rejects.toThrow(/immutable/);
      await expect(pgExec(`DELETE FROM ${s}.entries WHERE session_id = $1`, [sid])).rejects.toThrow(/immutable/);
      await expect(pgExec(`UPDATE ${s}.entries SET node = NULL WHERE session_id = $1`, [sid])).rejects.toThrow(/immutable/);
      await expect(pgExec(`UPDATE ${s}.sessions SET id = id WHERE id = $1`, [sid])).rejects.toThrow(/immutable/);
      await expect(pgExec(`DELETE FROM ${s}.sessions`)).rejects.toThrow(/immutable/);
      await pgExec(`INSERT INTO ${s}.nonces VALUES ('a', 'n', 'h', $1, 1)`, [sid]);
      await expect(pgExec(`UPDATE ${s}.nonces SET idx = 2`)).rejects.toThrow(/immutable/);
    } finally {
      await dropSchema(schema);
    }
  });

  it('an entry inserted by hand after the finalize (no trigger lifted) is refused on load, and the store refuses to append after it', async () => {
    const schema = freshSchemaName('sealed');
    const s = pg.escapeIdentifier(schema);
    try {
      const store = await PostgresStore.open({ url: PG_URL!, schema, poolSize: 2 });
      const engine = createEngine({ store });
      const { sid } = await runDay({ engine, wakes: 1, finalize: true });
      const head = await store.loadHead(sid);
      expect(head?.phase).toBe('sealed');
      const last = (await store.readRange(sid, 0, head!.size)).find((e) => e.kind === 'turn')!;
      // A sealed session cannot be appended to through the store, whatever the request says.
      const next = { ...head!, size: head!.size + 1, head: last.hash, phase: 'awaiting-frame' as const };
      expect(await store.append({ sessionId: sid, expected: { size: head!.size, head: head!.head }, entry: { ...last, index: head!.size, ordinal: (head!.size - 4) / 2 }, next, nonces: [] })).toEqual({ ok: false, reason: 'sealed' });
      await store.close();
      // Plain SQL can still add a row where the next turn would sit (history is insert-only, not append-checked), but no reader serves it.
      await pgExec(
        `INSERT INTO ${s}.entries (session_id, idx, hash, kind, ordinal, bytes, node, phase) VALUES ($1, $2, $3, 'turn', $4, $5, $6, 'awaiting-frame')`,
        [sid, head!.size, last.hash, (head!.size - 4) / 2, Buffer.from(last.bytes), Buffer.from(head!.frontier.at(-1)!, 'hex')],
      );
      const reopened = await PostgresStore.open({ url: PG_URL!, schema, poolSize: 2 });
      try {
        const refused = expect.objectContaining({ code: 'TALLY_STORE_CORRUPT', sessionId: sid, index: head!.size });
        await expect(createEngine({ store: reopened }).describe(sid)).rejects.toEqual(refused);
      } finally {
        await reopened.close();
      }
    } finally {
      await dropSchema(schema);
    }
  });
});
