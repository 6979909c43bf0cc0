/**
 * Start-up of an engine log over a large SQLite log (issue #26): the time
 * and the memory an `EngineLog` holds once it has read a log of `leaves`
 * leaves, started from the stored tiles, against the in-memory start it
 * replaced (every leaf read, hashed into a `MerkleLevels` and kept — the
 * loop `EngineLog` ran before stored tiles), in the same run on the same
 * file. Memory is the heap and array buffers still held after a full GC
 * with the log alive; RSS growth is printed beside it (RSS seldom shrinks,
 * so the tiled start is measured first). Prints nothing; the figure's note
 * carries the times and the memory.
 */
import Database from 'better-sqlite3';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineLog } from '../log/index.js';
import { MerkleLevels, engineLogLeafBytes, toHex } from '../protocol/index.js';
import { entryLeafHash } from '../receipt/bytes.js';
import { generateEngineKey } from '../receipt/index.js';
import { receiptHasher } from '../receipt/session/trees.js';
import { SqliteStore } from '../store/index.js';
import type { Figure } from './core.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap and array buffers in use after a full collection, and RSS. */
function held(): { bytes: number; rss: number } {
  gc();
  gc();
  const m = process.memoryUsage();
  return { bytes: m.heapUsed + m.arrayBuffers, rss: m.rss };
}

const mib = (n: number): string => (Math.abs(n) < 2 ** 20 ? `${(n / 1024).toFixed(0)} KiB` : `${(n / 2 ** 20).toFixed(1)} MiB`);

/** The start-up EngineLog ran before stored tiles: every leaf read in chunks of 4096, hashed and kept. */
async function inMemoryStart(store: SqliteStore): Promise<{ tree: MerkleLevels; leaves: Uint8Array[] }> {
  const tree = new MerkleLevels(receiptHasher);
  const leaves: Uint8Array[] = [];
  const n = await store.engineLogSize();
  while (tree.size < n) {
    const got = await store.engineLogLeaves(tree.size, Math.min(n, tree.size + 4096));
    for (const leaf of got) {
      tree.append(entryLeafHash(leaf));
      leaves.push(leaf);
    }
  }
  return { tree, leaves };
}

/** Runs the start-up figures over a log of `leaves` checkpoint leaves. */
export async function benchLogStart(leaves: number): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-bench-logstart-'));
  try {
    const file = join(dir, 'log.db');
    const store = new SqliteStore(file);
    const raw = new Database(file);
    const insert = raw.prepare('INSERT INTO engine_log (seq, leaf) VALUES (?, ?)');
    raw.transaction(() => {
      for (let i = 0; i < leaves; i++) {
        const root = toHex(entryLeafHash(new Uint8Array([i & 0xff, (i >> 8) & 0xff, i >> 16])));
        insert.run(i, Buffer.from(engineLogLeafBytes({ kind: 'checkpoint', origin: `bench.example/desk/${root}`, size: i + 1, root, seal: i % 2 === 0 })));
      }
    })();
    raw.close();
    const key = generateEngineKey('bench.example/desk/log');

    // The first start on a database without tiles (as after the migration): every leaf read once, every tile written.
    let t0 = performance.now();
    const first = new EngineLog({ store, key });
    await first.sync();
    const firstMs = performance.now() - t0;
    // Signed, as a serving engine's cadence signs it: a restart trusts the stored tiles up to the size signed.
    await first.checkpoint();
    const root = toHex(await first.root());

    // A restart: the last full tiles and the leaves after them.
    const m0 = held();
    t0 = performance.now();
    let tiled: EngineLog | undefined = new EngineLog({ store, key });
    await tiled.sync();
    const tiledMs = performance.now() - t0;
    const m1 = held();
    if (toHex(await tiled.root()) !== root) throw new Error('the restarted log has another root');
    tiled = undefined;

    const m2 = held();
    t0 = performance.now();
    let mem: Awaited<ReturnType<typeof inMemoryStart>> | undefined = await inMemoryStart(store);
    const memMs = performance.now() - t0;
    const m3 = held();
    if (toHex(mem.tree.root()) !== root) throw new Error('the in-memory tree has another root');
    mem = undefined;
    await store.close();

    const tiledHeld = Math.max(m1.bytes - m0.bytes, 1);
    const memHeld = Math.max(m3.bytes - m2.bytes, 1);
    // One figure (starts per second; the ratio is how many times faster); memory is in its note, as bytes are not a rate.
    return [
      {
        name: `engine log start-up from stored tiles, ${leaves} leaves (SQLite)`,
        perSecond: Math.round(1000 / tiledMs),
        baselineName: 'the in-memory start it replaced (every leaf read, hashed and kept)',
        baselinePerSecond: Math.round(1000 / memMs),
        ratio: Math.round((memMs / tiledMs) * 1000) / 1000,
        note:
          `${tiledMs.toFixed(1)} ms vs ${memMs.toFixed(1)} ms; held after GC ${mib(tiledHeld)} vs ${mib(memHeld)} (${(memHeld / tiledHeld).toFixed(0)}x less), ` +
          `RSS grew ${mib(m1.rss - m0.rss)} vs ${mib(m3.rss - m2.rss)}; the first start without tiles (writes them all) ${firstMs.toFixed(0)} ms`,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
