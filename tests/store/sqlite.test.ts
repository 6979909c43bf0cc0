/**
 * SQLite specifics: group commit batches concurrent appends into one
 * transaction while answering each on its own; a request that fails inside a
 * batch leaves the others committed; a writer that cannot get the lock in
 * time fails with TALLY_STORE_BUSY and writes nothing; misuse throws.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/session/index.js';
import { ScratchStore, SqliteStore, type AppendRequest } from '../../src/store/index.js';
import { driveDay, entriesOf, recordChains } from './helpers/record.js';
import { removeTempDirs, tempDir } from './helpers/tmp.js';

afterAll(removeTempDirs);

describe('SqliteStore', () => {
  it('group commit: 32 days written concurrently take far fewer transactions than appends, every append answered', async () => {
    const store = new SqliteStore(join(tempDir('gc'), 'g.db'));
    const engine = createEngine({ store });
    const sids = await Promise.all(Array.from({ length: 32 }, (_, i) => driveDay(engine, `gc-${i}`, 3, true)));
    const { appends, commits } = store.stats;
    expect(appends).toBe(32 * (2 * 4 + 1));
    expect(commits).toBeLessThan(appends / 8);
    for (const sid of sids) expect((await engine.describe(sid)).ok).toBe(true);
    await store.close();
  });

  it('without group commit every append is its own transaction', async () => {
    const store = new SqliteStore(join(tempDir('gc'), 'n.db'), { groupCommit: false, synchronous: 'NORMAL' });
    const engine = createEngine({ store });
    await Promise.all(Array.from({ length: 4 }, (_, i) => driveDay(engine, `solo-${i}`, 1, true)));
    expect(store.stats).toEqual({ appends: 4 * 5, commits: 4 * 5, reopens: 0 });
    await store.close();
  });

  it('one batch: same-head appends get one winner, and a request that throws rolls back alone', async () => {
    const store = new SqliteStore(join(tempDir('gc'), 'b.db'));
    const [a, b] = await recordChains('batch', [1, 1], false);
    for (const c of [a!, b!]) expect(await store.createSession(c.genesis, c.head0)).toBe('created');
    // A request on b's head after b's first append that passes every check before the
    // database but whose entry the database refuses mid-batch (no hash: NOT NULL).
    const noHash = null as unknown as string;
    const refused: AppendRequest = { ...b!.appends[1]!, entry: { ...b!.appends[1]!.entry, hash: noHash }, next: { ...b!.appends[1]!.next, head: noHash } };
    const reqs = [a!.appends[0]!, a!.appends[0]!, b!.appends[0]!, refused];
    const before = store.stats.commits;
    const out = await Promise.allSettled(reqs.map((r) => store.append(r)));
    expect(store.stats.commits).toBe(before + 1);
    expect(out.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as { code: string }).code))).toEqual([
      { ok: true },
      { ok: false, reason: 'head-moved' },
      { ok: true },
      'TALLY_STORE_IO',
    ]);
    expect((await store.loadHead(b!.sessionId))?.size).toBe(2);
    expect(await store.readRange(b!.sessionId, 0, 9)).toEqual(entriesOf(b!).slice(0, 2));
    await store.close();
  });

  it('a writer that cannot get the write lock within busyTimeoutMs fails with TALLY_STORE_BUSY and writes nothing', async () => {
    const file = join(tempDir('busy'), 'b.db');
    const store = new SqliteStore(file, { busyTimeoutMs: 50 });
    const [c] = await recordChains('busy', [0], false);
    await store.createSession(c!.genesis, c!.head0);
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    await expect(store.append(c!.appends[0]!)).rejects.toMatchObject({ code: 'TALLY_STORE_BUSY' });
    other.exec('ROLLBACK');
    other.close();
    expect((await store.loadHead(c!.sessionId))?.size).toBe(1);
    expect(await store.append(c!.appends[0]!)).toEqual({ ok: true });
    await store.close();
  });

  it('misuse throws: an inconsistent request, bad options, use after close', async () => {
    const store = new SqliteStore(join(tempDir('misuse'), 'm.db'));
    const [c] = await recordChains('misuse', [0], false);
    await store.createSession(c!.genesis, c!.head0);
    const r = c!.appends[0]!;
    await expect(store.append({ ...r, entry: { ...r.entry, index: 5 } })).rejects.toMatchObject({ code: 'TALLY_STORE_MISUSE' });
    await expect(store.append({ ...r, next: { ...r.next, head: c!.genesis.hash } })).rejects.toMatchObject({ code: 'TALLY_STORE_MISUSE' });
    await expect(store.createSession(r.entry, c!.head0)).rejects.toMatchObject({ code: 'TALLY_STORE_MISUSE' });
    expect(() => new SqliteStore(':memory:', { synchronous: 'OFF' as 'FULL' })).toThrow(TypeError);
    expect(() => new SqliteStore(':memory:', { busyTimeoutMs: -1 })).toThrow(RangeError);
    expect(() => new SqliteStore(':memory:', { cacheKiB: 0 })).toThrow(RangeError);
    expect(() => new SqliteStore(':memory:', { cacheKiB: 1.5 })).toThrow(RangeError);
    expect(() => new ScratchStore(join(tempDir('misuse'), 's.db'), { cacheKiB: 0 })).toThrow(RangeError);
    await store.close();
    await expect(store.loadHead(c!.sessionId)).rejects.toMatchObject({ code: 'TALLY_STORE_CLOSED' });
    await expect(store.append(r)).rejects.toMatchObject({ code: 'TALLY_STORE_CLOSED' });
  });

  it('close() commits appends still queued for the next group commit', async () => {
    const file = join(tempDir('close'), 'c.db');
    const store = new SqliteStore(file);
    const [c] = await recordChains('close', [0], false);
    await store.createSession(c!.genesis, c!.head0);
    const pending = store.append(c!.appends[0]!);
    await store.close();
    expect(await pending).toEqual({ ok: true });
    const again = new SqliteStore(file);
    expect((await again.loadHead(c!.sessionId))?.size).toBe(2);
    await again.close();
  });

  it('uses WAL journaling', async () => {
    const file = join(tempDir('wal'), 'w.db');
    await new SqliteStore(file).close();
    const db = new Database(file);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });
});
