/** One location string opens any store; the default path and TALLY_DB. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_DB_PATH, MemoryStore, PostgresStore, SqliteStore, defaultStoreLocation, openStore } from '../../src/store/index.js';
import { PG_URL, dropSchema, freshSchemaName, pgReady, warnIfSkipped } from './helpers/pg.js';
import { removeTempDirs, tempDir } from './helpers/tmp.js';

warnIfSkipped('open.test.ts');
afterAll(removeTempDirs);

const savedEnv = process.env.TALLY_DB;
afterEach(() => {
  if (savedEnv === undefined) delete process.env.TALLY_DB;
  else process.env.TALLY_DB = savedEnv;
});

describe('openStore(location)', () => {
  it('the default location is .tally/tally.db unless TALLY_DB names another', () => {
    expect(DEFAULT_DB_PATH).toBe('.tally/tally.db');
    expect(defaultStoreLocation({})).toBe('.tally/tally.db');
    expect(defaultStoreLocation({ TALLY_DB: '' })).toBe('.tally/tally.db');
    expect(defaultStoreLocation({ TALLY_DB: 'memory:' })).toBe('memory:');
    expect(defaultStoreLocation({ TALLY_DB: 'postgres://h/db' })).toBe('postgres://h/db');
  });

  it('memory: opens a MemoryStore', async () => {
    const s = await openStore('memory:');
    expect(s).toBeInstanceOf(MemoryStore);
    await s.close();
  });

  it('a file path opens SQLite there, creating parent directories; sqlite: prefix is the same', async () => {
    const dir = tempDir('open');
    const file = join(dir, 'a', 'b', 'tally.db');
    const s = await openStore(file);
    expect(s).toBeInstanceOf(SqliteStore);
    expect(s.name).toBe(`sqlite:${file}`);
    expect(existsSync(file)).toBe(true);
    await s.close();
    const p = await openStore(`sqlite:${join(dir, 'c', 'x.db')}`, { sqlite: { synchronous: 'NORMAL' } });
    expect(p).toBeInstanceOf(SqliteStore);
    expect(existsSync(join(dir, 'c', 'x.db'))).toBe(true);
    await p.close();
  });

  it('without a location it opens TALLY_DB', async () => {
    const file = join(tempDir('env'), 'nested', 'env.db');
    process.env.TALLY_DB = file;
    const s = await openStore();
    expect(s.name).toBe(`sqlite:${file}`);
    await s.close();
    process.env.TALLY_DB = 'memory:';
    const m = await openStore();
    expect(m).toBeInstanceOf(MemoryStore);
  });

  it('rejects an empty location', async () => {
    await expect(openStore('')).rejects.toThrow(TypeError);
    await expect(openStore('sqlite:')).rejects.toThrow(TypeError);
  });

  it.skipIf(!pgReady)('postgres:// and postgresql:// open PostgreSQL; ?schema= selects the schema; the name hides the password', async () => {
    const schema = freshSchemaName('open');
    try {
      const u = new URL(PG_URL!);
      u.searchParams.set('schema', schema);
      const s = await openStore(u.toString());
      expect(s).toBeInstanceOf(PostgresStore);
      expect((s as PostgresStore).schema).toBe(schema);
      await s.close();
      const q = new URL(PG_URL!.replace(/^postgres:/, 'postgresql:'));
      const t = await openStore(q.toString(), { postgres: { schema, poolSize: 1 } });
      expect((t as PostgresStore).schema).toBe(schema);
      await t.close();
      const withPassword = new URL(PG_URL!);
      withPassword.password = 'sekret';
      withPassword.searchParams.set('schema', schema);
      // Trust auth ignores the password; the store's name must not carry it.
      const w = await openStore(withPassword.toString());
      expect(w.name).not.toContain('sekret');
      await w.close();
    } finally {
      await dropSchema(schema);
    }
  });

  it.skipIf(!pgReady)('an invalid schema name is refused before connecting', async () => {
    await expect(PostgresStore.open({ url: PG_URL!, schema: 'x; DROP TABLE y' })).rejects.toThrow(RangeError);
  });

  it('an unreachable PostgreSQL server fails with TALLY_STORE_OPEN', async () => {
    await expect(openStore('postgres://nobody@127.0.0.1:1/none')).rejects.toMatchObject({ code: 'TALLY_STORE_OPEN' });
  });
});
