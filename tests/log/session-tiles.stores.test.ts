/**
 * A session's tiles (docs/PROTOCOL.md §15.4.1) are a function of its entries
 * and the engine key alone: the same deterministic day in SQLite and in a
 * real PostgreSQL schema exports the same files, byte for byte, and each
 * store answers every one of them as readSessionTile (what `tally serve`
 * sends). Needs TALLY_PG_URL (skips, saying so, when it is unset).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { exportSessionTiles, readSessionTile } from '../../src/log/session-tiles.js';
import { SessionTrees, createNotary, generateEngineKey } from '../../src/receipt/index.js';
import { PostgresStore, SqliteStore, type TranscriptStore } from '../../src/store/index.js';
import { runDay } from '../helpers/day.js';
import { PG_URL, dropSchema, freshSchemaName, pgReady, warnIfSkipped } from '../store/helpers/pg.js';
import { removeTempDirs, tempDir } from '../store/helpers/tmp.js';

afterAll(removeTempDirs);
warnIfSkipped('session-tiles.stores.test.ts');

const key = generateEngineKey('stores.test/desk');

/** Runs the day in `store`, signs sizes 3, 100 and 260 first, exports; returns the files and their bytes as served. */
async function exportDay(store: TranscriptStore, out: string) {
  const engine = createEngine({ store });
  const trees = new SessionTrees();
  const o = { engine, notary: createNotary({ key, trees }), trees };
  const { sid } = await runDay({ engine, wakes: 140, name: 'stores-day' });
  for (const size of [3, 100, 260]) if (!(await o.notary.issueCheckpoint(engine, sid, size)).ok) throw new Error('sign');
  const ex = await exportSessionTiles(o, sid, out);
  const files = (readdirSync(out, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[]).filter((d) => d.isFile()).map((d) => relative(out, join(d.parentPath, d.name))).sort();
  expect([...ex.files].sort()).toEqual(files);
  const served: Record<string, Buffer> = {};
  for (const f of files) {
    const r = await readSessionTile(o, sid, f);
    if (!r.ok) throw new Error(`${f}: ${r.message}`);
    served[f] = Buffer.from(r.resource.body);
    expect(served[f].equals(readFileSync(join(out, f))), f).toBe(true);
  }
  return { sid, files, served };
}

describe.skipIf(!pgReady)('a session\'s tiles from SQLite and from PostgreSQL', () => {
  it('the same day gives the same files, byte for byte, served and exported', async () => {
    const dir = tempDir('st-stores');
    const sqlite = new SqliteStore(join(dir, 'day.db'));
    const schema = freshSchemaName('sesstiles');
    const pgs = await PostgresStore.open({ url: PG_URL!, schema, poolSize: 2 });
    try {
      const a = await exportDay(sqlite, join(dir, 'sqlite'));
      const b = await exportDay(pgs, join(dir, 'pg'));
      expect(b.sid).toBe(a.sid);
      // 284 entries: a full tile and a partial one of 28; the partials of sizes 3 and 100 are replaced by the full tile 0/000, size 260's stay.
      expect(a.files).toEqual(['checkpoint', 'tile/0/000', 'tile/0/001.p/28', 'tile/0/001.p/4', 'tile/1/000.p/1', 'tile/entries/000', 'tile/entries/001.p/28', 'tile/entries/001.p/4']);
      expect(b.files).toEqual(a.files);
      for (const f of a.files) expect(b.served[f]!.equals(a.served[f]!), f).toBe(true);
    } finally {
      await sqlite.close();
      await pgs.close();
      await dropSchema(schema);
    }
  }, 120_000);
});
