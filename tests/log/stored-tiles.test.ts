/**
 * The engine log kept as stored tiles (src/log/stored-tree.ts) answers the
 * same bytes as the in-memory tree it replaced: every tile and entry bundle,
 * root, inclusion and consistency proof, at the current size and at old
 * ones, equals what a `MerkleLevels` over every leaf hash gives — for an
 * engine that grew the log and for one started fresh from the stored tiles,
 * on real SQLite and on the real PostgreSQL. Leaves are written straight into
 * the store's `engine_log` table (as the store's own transactions do), so a
 * log of 65,536+ leaves takes seconds.
 *
 * Crash safety: a tile the store lacks is rebuilt from its leaves, a stored
 * tile is written again as the same bytes, and one that disagrees with its
 * leaves is refused (`TALLY_LOG_TILE_MISMATCH`), never repaired.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import pg from 'pg';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EngineLog, tileBytes } from '../../src/log/index.js';
import { MerkleLevels, entryBundle, tileHashes, tilesForSize, toHex, type TileRef } from '../../src/protocol/index.js';
import { entryLeafHash } from '../../src/receipt/bytes.js';
import { generateEngineKey } from '../../src/receipt/index.js';
import { receiptHasher } from '../../src/receipt/session/trees.js';
import { PostgresStore, SqliteStore, type EngineLogStore, type SigningLogStore } from '../../src/store/index.js';
import { PG_URL, dropSchema, freshSchemaName, pgExec, pgReady, warnIfSkipped } from '../store/helpers/pg.js';
import { removeTempDirs, tempDir } from '../store/helpers/tmp.js';

warnIfSkipped('stored-tiles.test.ts');
afterAll(removeTempDirs);

const logKey = generateEngineKey('tiles.test/desk/log');
const SEED = Number(process.env['TALLY_TEST_SEED'] ?? 0x7113);

type Store = SigningLogStore & EngineLogStore & { close(): Promise<void> };

/** A real store and a second connection that appends raw leaves to its engine log. */
interface RawLog {
  readonly store: Store;
  /** Appends leaves `leafBytes(size) … leafBytes(to − 1)` to the store's engine log. */
  grow(to: number): Promise<void>;
  /** Runs SQL (`?` placeholders) on the store's database as a tamperer would. */
  exec(sql: string, params?: unknown[]): Promise<void>;
  /** The schema-qualified name of a table. */
  table(name: string): string;
  dispose(): Promise<void>;
}

const leafBytes = (i: number): Uint8Array => new TextEncoder().encode(`leaf ${i}`);

async function sqliteLog(): Promise<RawLog> {
  const file = join(tempDir('tiles'), 'log.db');
  const store = new SqliteStore(file);
  const raw = new Database(file);
  const insert = raw.prepare('INSERT INTO engine_log (seq, leaf) VALUES (?, ?)');
  let size = 0;
  return {
    store,
    async grow(to) {
      raw.transaction(() => {
        for (; size < to; size++) insert.run(size, Buffer.from(leafBytes(size)));
      })();
    },
    async exec(sql, params = []) {
      raw.prepare(sql).run(...(params as unknown[]));
    },
    table: (name) => name,
    async dispose() {
      raw.close();
      await store.close();
    },
  };
}

async function postgresLog(): Promise<RawLog> {
  const schema = freshSchemaName('tiles');
  const store = await PostgresStore.open({ url: PG_URL!, schema, poolSize: 4 });
  const s = pg.escapeIdentifier(schema);
  let size = 0;
  return {
    store,
    async grow(to) {
      // The leaves are the same bytes as leafBytes. The head's trigger lets it count up one leaf per
      // update; for a bulk load the operator sets it once with the trigger off (one update of 65,536).
      await pgExec(`BEGIN;
        INSERT INTO ${s}.engine_log (seq, leaf) SELECT i, convert_to('leaf ' || i, 'UTF8') FROM generate_series(${size}, ${to - 1}) AS i;
        ALTER TABLE ${s}.engine_log_head DISABLE TRIGGER engine_log_head_counts_up;
        UPDATE ${s}.engine_log_head SET size = ${to};
        ALTER TABLE ${s}.engine_log_head ENABLE TRIGGER engine_log_head_counts_up;
        COMMIT;`);
      size = to;
    },
    async exec(sql, params = []) {
      let n = 0;
      await pgExec(sql.replace(/\?/g, () => `$${++n}`), params);
    },
    table: (name) => `${s}.${name}`,
    async dispose() {
      await store.close();
      await dropSchema(schema);
    },
  };
}

/** The in-memory tree the engine log kept before (every leaf hash in a MerkleLevels). */
function reference(size: number): { tree: MerkleLevels; leaves: Uint8Array[] } {
  const tree = new MerkleLevels(receiptHasher);
  const leaves: Uint8Array[] = [];
  for (let i = 0; i < size; i++) {
    leaves.push(leafBytes(i));
    tree.append(entryLeafHash(leaves[i]!));
  }
  return { tree, leaves };
}

function refTile(ref: { tree: MerkleLevels; leaves: Uint8Array[] }, t: TileRef): string {
  if (t.kind === 'entries') return toHex(entryBundle(ref.leaves.slice(t.index * 256, t.index * 256 + t.width)));
  return toHex(tileHashes(ref.tree, t.level, t.index, t.width));
}

const hexes = (hs: Uint8Array[]): string[] => hs.map(toHex);

/** Every tile of `size` and of an older size, roots, and `probes` random proofs: the same bytes as the reference. */
async function expectSame(log: EngineLog, size: number, rnd: () => number, probes = 12): Promise<void> {
  expect(log.size).toBe(size);
  const ref = reference(size);
  const older = Math.floor(rnd() * size) + 1;
  for (const s of [size, older]) {
    expect(toHex(await log.root(s)), `root(${s})`).toBe(toHex(ref.tree.root(s)));
    for (const t of tilesForSize(s)) expect(toHex(await tileBytes(log, t)), `${JSON.stringify(t)} of size ${s}`).toBe(refTile(ref, t));
  }
  for (let k = 0; k < probes; k++) {
    const s2 = Math.floor(rnd() * size) + 1;
    const index = Math.floor(rnd() * s2);
    const s1 = Math.floor(rnd() * s2) + 1;
    expect(hexes(await log.inclusionProof(index, s2)), `inclusion ${index} in ${s2}`).toEqual(hexes(ref.tree.inclusionProof(index, s2)));
    expect(hexes(await log.consistencyProof(s1, s2)), `consistency ${s1} to ${s2}`).toEqual(hexes(ref.tree.consistencyProof(s1, s2)));
  }
  const at = Math.floor(rnd() * size);
  expect(toHex(await log.leaf(at))).toBe(toHex(leafBytes(at)));
}

/** `store` with its leaf and tile reads counted (a window onto the real store, not a stand-in). */
function counted(store: Store): { store: Store; leaves: () => number; tiles: () => number } {
  let leaves = 0;
  let tiles = 0;
  const view = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (prop === 'engineLogLeaves') return async (a: number, b: number) => ((r) => ((leaves += r.length), r))(await target.engineLogLeaves(a, b));
      if (prop === 'engineLogTiles') return async (l: number, a: number, b: number) => ((r) => ((tiles += r.length), r))(await target.engineLogTiles(l, a, b));
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { store: view, leaves: () => leaves, tiles: () => tiles };
}

/** A small deterministic generator for the probes (fast-check gives the sizes). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => ((x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0) / 2 ** 32);
}

const KINDS = [
  { label: 'SQLite', skip: false, make: sqliteLog },
  { label: 'PostgreSQL', skip: !pgReady, make: postgresLog },
] as const;

describe.each(KINDS.map((k) => [k.label, k] as const))('the engine log as stored tiles on %s', (label, kind) => {
  it.skipIf(kind.skip)(`equals the in-memory tree at random sizes, grown and started afresh (fast-check seed ${SEED})`, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 4 }), fc.integer(), async (steps, probeSeed) => {
        run++;
        const raw = await kind.make();
        try {
          const grown = new EngineLog({ store: raw.store, key: logKey });
          let size = 0;
          for (const step of steps) {
            size += step;
            await raw.grow(size);
            await grown.sync();
            await expectSame(grown, size, rng(probeSeed + size));
            await grown.checkpoint(); // what start-up trusts the tiles up to
            const c = counted(raw.store);
            const fresh = new EngineLog({ store: c.store, key: logKey });
            await fresh.sync();
            // Start-up reads the leaves after the last full tile and, per level, the tiles below its partial one.
            expect(c.leaves(), 'leaves read at start-up').toBe(size % 256);
            expect(c.tiles(), 'tiles read at start-up').toBeLessThanOrEqual(255 * 2);
            await expectSame(fresh, size, rng(probeSeed ^ size));
          }
        } finally {
          await raw.dispose();
        }
      }),
      { seed: SEED, numRuns: label === 'SQLite' ? 8 : 4 },
    );
    expect(run).toBeGreaterThan(0);
  }, 240_000);

  it.skipIf(kind.skip)('crosses the first level-1 tile (65,536 leaves): grown, started afresh, old sizes still proved', async () => {
    const raw = await kind.make();
    try {
      const grown = new EngineLog({ store: raw.store, key: logKey });
      for (const size of [65_535, 65_536, 65_537, 65_536 + 300]) {
        await raw.grow(size);
        await grown.sync();
        await expectSame(grown, size, rng(size), 6);
      }
      expect((await raw.store.engineLogTileCounts()).slice(0, 2)).toEqual([257, 1]);
      const signed = await grown.checkpoint();
      const c = counted(raw.store);
      const fresh = new EngineLog({ store: c.store, key: logKey });
      await fresh.sync();
      expect(c.leaves()).toBe(44); // 65,836 − 257·256
      expect(c.tiles()).toBe(1 + 1); // level-1 partial: tile 0/256; level-2 partial: tile 1/0
      await expectSame(fresh, 65_836, rng(7), 6);
      // The fresh engine answers the checkpoint the grown one signed (the same bytes).
      expect((await fresh.latest())?.signedCheckpoint).toBe(signed.signedCheckpoint);
    } finally {
      await raw.dispose();
    }
  }, 240_000);

  it.skipIf(kind.skip)('a missing tile is rebuilt from its leaves; a stored one is written again as the same bytes', async () => {
    const raw = await kind.make();
    try {
      // A database whose leaves predate the tiles (or whose writer died before writing them).
      await raw.grow(600);
      expect(await raw.store.engineLogTileCounts()).toEqual([]);
      const a = new EngineLog({ store: raw.store, key: logKey });
      await a.sync();
      expect(await raw.store.engineLogTileCounts()).toEqual([2]);
      // Two engines on one database write the same tiles: the second's writes are the same bytes.
      await raw.grow(900);
      const b = new EngineLog({ store: raw.store, key: logKey });
      await Promise.all([a.sync(), b.sync()]);
      expect(await raw.store.engineLogTileCounts()).toEqual([3]);
      expect(toHex(await a.root())).toBe(toHex(await b.root()));
      await expectSame(b, 900, rng(9), 4);
    } finally {
      await raw.dispose();
    }
  });

  it.skipIf(kind.skip)('a stored tile that disagrees with its leaves is refused (TALLY_LOG_TILE_MISMATCH), not repaired', async () => {
    const raw = await kind.make();
    try {
      await raw.grow(600);
      const a = new EngineLog({ store: raw.store, key: logKey });
      const signed = await a.checkpoint();
      // Another writer stored other bytes for the next tile before this engine reached it.
      await raw.exec(`INSERT INTO ${raw.table('engine_log_tiles')} (level, idx, hashes) VALUES (?, ?, ?)`, [0, 2, Buffer.alloc(8192, 7)]);
      await raw.grow(800);
      await expect(a.sync()).rejects.toMatchObject({ code: 'TALLY_LOG_TILE_MISMATCH' });
      expect(a.size).toBe(600);
      // The stored bytes stay as they were (refused, not overwritten).
      expect(toHex((await raw.store.engineLogTiles(0, 2, 3))[0]!)).toBe('07'.repeat(8192));
      // A new engine trusts stored tiles only up to the size signed (600): it rebuilds tile 0/2 from the leaves
      // and refuses the stored one at start-up, before it could serve or sign from it.
      const b = new EngineLog({ store: raw.store, key: logKey });
      await expect(b.sync()).rejects.toMatchObject({ code: 'TALLY_LOG_TILE_MISMATCH' });
      await expect(b.latest()).rejects.toMatchObject({ code: 'TALLY_LOG_TILE_MISMATCH' });
      expect(signed.size).toBe(600);
    } finally {
      await raw.dispose();
    }
  });

  it.skipIf(kind.skip)('a log never signed starts from its leaves: a tile stored before any engine computed it is refused', async () => {
    const raw = await kind.make();
    try {
      await raw.grow(700);
      await raw.exec(`INSERT INTO ${raw.table('engine_log_tiles')} (level, idx, hashes) VALUES (?, ?, ?)`, [0, 0, Buffer.alloc(8192, 5)]);
      await raw.exec(`INSERT INTO ${raw.table('engine_log_tiles')} (level, idx, hashes) VALUES (?, ?, ?)`, [0, 1, Buffer.alloc(8192, 6)]);
      const c = counted(raw.store);
      const a = new EngineLog({ store: c.store, key: logKey });
      await expect(a.checkpoint()).rejects.toMatchObject({ code: 'TALLY_LOG_TILE_MISMATCH' });
      expect(c.leaves(), 'leaves read: from 0, not from the planted tiles').toBeGreaterThanOrEqual(256);
      expect(await raw.store.latestCheckpoint(logKey.name)).toBeUndefined();
    } finally {
      await raw.dispose();
    }
  });
});

describe('a stored tile changed under a running engine (SQLite, the append-only trigger dropped)', () => {
  it('is refused when read back: its root is not the hash one level up (TALLY_LOG_TILE_MISMATCH)', async () => {
    const raw = await sqliteLog();
    try {
      await raw.grow(800);
      await new EngineLog({ store: raw.store, key: logKey }).checkpoint();
      const c = new EngineLog({ store: raw.store, key: logKey });
      await c.sync(); // started from the tiles up to the signed size: tile 0/0 not read yet
      await raw.exec('DROP TRIGGER engine_log_tiles_immutable_update');
      await raw.exec('UPDATE engine_log_tiles SET hashes = ? WHERE level = 0 AND idx = 0', [Buffer.alloc(8192, 9)]);
      await expect(c.inclusionProof(5, 800)).rejects.toMatchObject({ code: 'TALLY_LOG_TILE_MISMATCH' });
      await expect(tileBytes(c, { kind: 'hash', level: 0, index: 0, width: 256 })).rejects.toMatchObject({ code: 'TALLY_LOG_TILE_MISMATCH' });
    } finally {
      await raw.dispose();
    }
  });

  it('a tile below the signed size changed while no engine ran: the next start-up refuses the tree (its root is not the one signed)', async () => {
    const raw = await sqliteLog();
    try {
      await raw.grow(800);
      await new EngineLog({ store: raw.store, key: logKey }).checkpoint();
      await raw.exec('DROP TRIGGER engine_log_tiles_immutable_update');
      // Tile 0/1 is read at start-up (its root is a hash of the level-1 edge), so it is checked there, not later.
      await raw.exec('UPDATE engine_log_tiles SET hashes = ? WHERE level = 0 AND idx = 1', [Buffer.alloc(8192, 9)]);
      const next = new EngineLog({ store: raw.store, key: logKey });
      await expect(next.sync()).rejects.toMatchObject({ code: 'TALLY_LOG_ROLLED_BACK' });
    } finally {
      await raw.dispose();
    }
  });
});

describe('a writer that dies between a level-0 tile and the level-1 tile it completes (SQLite)', () => {
  it('leaves a store the next engine starts from: the level-0 tile written again as the same bytes, the level-1 tile added', async () => {
    const raw = await sqliteLog();
    try {
      await raw.grow(65_300);
      await new EngineLog({ store: raw.store, key: logKey }).checkpoint();
      await raw.grow(65_536);
      // The write of tile 1/0 fails as a killed process's would: after tile 0/255 is stored.
      const dying = Object.assign(Object.create(raw.store) as Store, {
        putEngineLogTile: (level: number, index: number, hashes: Uint8Array) => (level === 1 ? Promise.reject(new Error('killed')) : raw.store.putEngineLogTile(level, index, hashes)),
      });
      await expect(new EngineLog({ store: dying, key: logKey }).sync()).rejects.toThrow('killed');
      expect(await raw.store.engineLogTileCounts()).toEqual([256]);
      const c = counted(raw.store);
      const next = new EngineLog({ store: c.store, key: logKey });
      await next.sync();
      expect(c.leaves()).toBe(256); // from the last tile boundary at or below the size signed (65,300): leaf 65,280
      expect(await raw.store.engineLogTileCounts()).toEqual([256, 1]);
      expect(toHex(await next.root())).toBe(toHex(reference(65_536).tree.root()));
    } finally {
      await raw.dispose();
    }
  }, 120_000);
});
