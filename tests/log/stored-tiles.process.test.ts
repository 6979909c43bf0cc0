/**
 * Engine processes sharing one database start their engine logs at once on
 * a log no process has tiled yet: each writes the tiles it completes (insert
 * if absent, then compared), so they race on every tile write. They must all
 * sign the same checkpoint (the same bytes), leave each tile stored once, and
 * agree with the in-memory tree — on one SQLite file and one PostgreSQL schema.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MerkleLevels, toHex } from '../../src/protocol/index.js';
import { entryLeafHash } from '../../src/receipt/bytes.js';
import { formatPrivateKey, generateEngineKey } from '../../src/receipt/index.js';
import { receiptHasher } from '../../src/receipt/session/trees.js';
import { openStore, type EngineLogStore } from '../../src/store/index.js';
import { PG_URL, dropSchema, freshSchemaName, pgExec, pgReady, warnIfSkipped } from '../store/helpers/pg.js';
import { removeTempDirs, tempDir } from '../store/helpers/tmp.js';

warnIfSkipped('stored-tiles.process.test.ts');
afterAll(removeTempDirs);

const WORKER = resolve(import.meta.dirname, 'workers/tiler.mjs');
const logKey = generateEngineKey('tiler.test/desk/log');
const LEAVES = 3000;
const leafBytes = (i: number): Uint8Array => new TextEncoder().encode(`leaf ${i}`);

interface Out {
  readonly size: number;
  readonly root: string;
  readonly note: string;
}

async function worker(location: string): Promise<{ go(): void; result: Promise<Out> }> {
  const proc = spawn(process.execPath, [WORKER, JSON.stringify({ key: formatPrivateKey(logKey), location })], { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  let got: Out | undefined;
  const result = new Promise<Out>((res, rej) => {
    createInterface({ input: proc.stdout! }).on('line', (l) => {
      const o = JSON.parse(l) as Out & { ready?: boolean; done?: boolean };
      if (o.ready) ready();
      else if (o.done) res(got!);
      else got = o;
    });
    proc.once('exit', (code) => (code === 0 ? undefined : rej(new Error(`worker exited ${code}: ${err}`))));
  });
  await Promise.race([isReady, result]);
  return { go: () => proc.stdin!.end('go\n'), result };
}

async function race(location: string, load: () => Promise<void>): Promise<void> {
  const store = (await openStore(location)) as unknown as EngineLogStore & { close(): Promise<void> };
  try {
    await load();
    const ws = await Promise.all([0, 1, 2, 3].map(() => worker(location)));
    for (const w of ws) w.go();
    const outs = await Promise.all(ws.map((w) => w.result));
    const ref = new MerkleLevels(receiptHasher);
    for (let i = 0; i < LEAVES; i++) ref.append(entryLeafHash(leafBytes(i)));
    for (const o of outs) {
      expect(o.size).toBe(LEAVES);
      expect(o.root).toBe(toHex(ref.root()));
      expect(o.note).toBe(outs[0]!.note);
    }
    expect(await store.engineLogTileCounts()).toEqual([Math.floor(LEAVES / 256)]);
    const tiles = await store.engineLogTiles(0, 0, 100);
    expect(tiles).toHaveLength(Math.floor(LEAVES / 256));
    tiles.forEach((t, i) => expect(toHex(t)).toBe(Array.from({ length: 256 }, (_, j) => toHex(ref.leafHash(i * 256 + j))).join('')));
  } finally {
    await store.close();
  }
}

describe('engine processes on one database start their engine logs at once', () => {
  it('SQLite file: four processes write each tile once and sign one checkpoint', async () => {
    const file = join(tempDir('tiler'), 'log.db');
    await race(file, async () => {
      const raw = new Database(file);
      const insert = raw.prepare('INSERT INTO engine_log (seq, leaf) VALUES (?, ?)');
      raw.transaction(() => {
        for (let i = 0; i < LEAVES; i++) insert.run(i, Buffer.from(leafBytes(i)));
      })();
      raw.close();
    });
  }, 120_000);

  it.skipIf(!pgReady)('PostgreSQL schema: four processes write each tile once and sign one checkpoint', async () => {
    const schema = freshSchemaName('tiler');
    const s = pg.escapeIdentifier(schema);
    try {
      await race(`${PG_URL}${PG_URL!.includes('?') ? '&' : '?'}schema=${schema}`, async () => {
        await pgExec(`BEGIN;
          INSERT INTO ${s}.engine_log (seq, leaf) SELECT i, convert_to('leaf ' || i, 'UTF8') FROM generate_series(0, ${LEAVES - 1}) AS i;
          ALTER TABLE ${s}.engine_log_head DISABLE TRIGGER engine_log_head_counts_up;
          UPDATE ${s}.engine_log_head SET size = ${LEAVES};
          ALTER TABLE ${s}.engine_log_head ENABLE TRIGGER engine_log_head_counts_up;
          COMMIT;`);
      });
    } finally {
      await dropSchema(schema);
    }
  }, 120_000);
});
