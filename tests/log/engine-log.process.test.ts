/**
 * Engine processes sharing one database (a SQLite file; a PostgreSQL
 * schema), each signing with the same engine key:
 *
 * - a race: four processes drive the same sessions (same specs, frames and
 *   turns), sign the same checkpoints and seal them — the engine log must
 *   hold one open leaf per session and one checkpoint leaf per signing-log
 *   row, positions 0 … n−1, no duplicate, no gap;
 * - kill -9: a process signing in a loop is killed at a random moment
 *   (seeded, printed) — afterwards, and after another process has carried on
 *   in the same database, the log still equals the signing history exactly,
 *   and every signature the killed process returned has its leaf.
 *
 * OS timing decides the interleavings; the invariant is checked on the
 * outcome (tests/log/engine-log.model.test.ts forces interleavings in one
 * process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatPrivateKey, generateEngineKey } from '../../src/receipt/index.js';
import { openStore, type EngineLogStore, type TranscriptStore } from '../../src/store/index.js';
import { PG_URL, dropSchema, freshSchemaName, pgReady, warnIfSkipped } from '../store/helpers/pg.js';
import { removeTempDirs, tempDir } from '../store/helpers/tmp.js';
import { expectLogIsHistory } from './helpers.js';

warnIfSkipped('engine-log.process.test.ts');
afterAll(removeTempDirs);

const WORKER = resolve(import.meta.dirname, 'workers/sealer.mjs');
const key = generateEngineKey('process.test/desk');
const KEY = formatPrivateKey(key);

interface Signed {
  readonly origin: string;
  readonly size: number;
  readonly root: string;
}

interface Worker {
  readonly proc: ChildProcess;
  go(): void;
  readonly signed: Signed[];
  /** Resolves when the worker printed `done` (rejects if it exits otherwise, unless killed). */
  readonly done: Promise<void>;
  /** Resolves once `n` signatures were printed. */
  after(n: number): Promise<void>;
}

async function worker(cfg: object): Promise<Worker> {
  const proc = spawn(process.execPath, [WORKER, JSON.stringify({ key: KEY, ...cfg })], { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const signed: Signed[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  const done = new Promise<void>((res, rej) => {
    createInterface({ input: proc.stdout! }).on('line', (l) => {
      const o = JSON.parse(l) as Signed & { ready?: boolean; done?: boolean };
      if (o.ready) ready();
      else if (o.done) res();
      else {
        signed.push(o);
        for (const w of waiters) if (signed.length >= w.n) w.resolve();
      }
    });
    proc.once('exit', (code, sig) => (code === 0 || sig === 'SIGKILL' ? res() : rej(new Error(`worker exited ${code}: ${err}`))));
  });
  await Promise.race([isReady, done]);
  return {
    proc,
    go: () => proc.stdin!.end('go\n'),
    signed,
    done,
    after: (n) => new Promise<void>((r) => (signed.length >= n ? r() : waiters.push({ n, resolve: r }))),
  };
}

async function check(location: string, signed: readonly Signed[]): Promise<void> {
  const store = (await openStore(location)) as TranscriptStore & EngineLogStore;
  try {
    const leaves = await expectLogIsHistory(store, key.name);
    const logged = new Set(leaves.flatMap((l) => (l.kind === 'checkpoint' ? [JSON.stringify([l.origin, l.size, l.root])] : [])));
    for (const s of signed) expect(logged.has(JSON.stringify([s.origin, s.size, s.root])), `leaf for ${s.origin} ${s.size}`).toBe(true);
  } finally {
    await store.close();
  }
}

async function race(location: string): Promise<void> {
  const sessions = ['race-0', 'race-1', 'race-2'];
  const ws = await Promise.all([0, 1, 2, 3].map((i) => worker({ location, mode: 'race', sessions: i % 2 ? sessions : [...sessions].reverse(), turns: 3, sizes: i % 2 ? [3, 5, 2] : [2, 5, 3] })));
  for (const w of ws) w.go();
  await Promise.all(ws.map((w) => w.done));
  const all = ws.flatMap((w) => w.signed);
  await check(location, all);
  const store = (await openStore(location)) as TranscriptStore & EngineLogStore;
  try {
    // 3 opens + 3 sessions × (3 checkpoints + the seal), however many processes signed each.
    expect(await store.engineLogSize()).toBe(3 + 3 * 4);
  } finally {
    await store.close();
  }
}

async function killed(location: string): Promise<void> {
  const seed = Number(process.env.TALLY_TEST_SEED ?? Date.now() % 100_000);
  console.log(`engine-log kill -9: seed ${seed} (TALLY_TEST_SEED=${seed} to replay)`);
  let x = seed;
  const rnd = (n: number) => ((x = (x * 1_103_515_245 + 12_345) % 2 ** 31), x % n);
  const victims: Signed[] = [];
  for (let round = 0; round < 3; round++) {
    const w = await worker({ location, mode: 'loop', prefix: `kill-${seed}-${round}` });
    w.go();
    await w.after(1 + rnd(6));
    await new Promise((r) => setTimeout(r, rnd(15)));
    w.proc.kill('SIGKILL');
    await w.done;
    victims.push(...w.signed);
    await check(location, victims);
  }
  expect(victims.length).toBeGreaterThan(0);
}

describe('engine processes on one database', () => {
  it('SQLite file: four racing processes leave exactly the signing history in the log', async () => {
    await race(join(tempDir('englog'), 'race.db'));
  }, 120_000);

  it('SQLite file: kill -9 between signing and answering leaves no signature without its leaf', async () => {
    await killed(join(tempDir('englog'), 'kill.db'));
  }, 120_000);

  it.skipIf(!pgReady)('PostgreSQL schema: four racing processes leave exactly the signing history in the log', async () => {
    const schema = freshSchemaName('englog');
    try {
      await race(`${PG_URL}${PG_URL!.includes('?') ? '&' : '?'}schema=${schema}`);
    } finally {
      await dropSchema(schema);
    }
  }, 120_000);

  it.skipIf(!pgReady)('PostgreSQL schema: kill -9 between signing and answering leaves no signature without its leaf', async () => {
    const schema = freshSchemaName('englogk');
    try {
      await killed(`${PG_URL}${PG_URL!.includes('?') ? '&' : '?'}schema=${schema}`);
    } finally {
      await dropSchema(schema);
    }
  }, 120_000);
});
