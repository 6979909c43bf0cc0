/**
 * The engine log on every store: a leaf for each session opened and each
 * session checkpoint signed, appended with what it records — not for a
 * session that already exists, a duplicate signature, or a refused one.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { createNotary, generateEngineKey, SigningRefusedError } from '../../src/receipt/index.js';
import { EngineLog } from '../../src/log/index.js';
import { STORE_KINDS } from '../store/helpers/stores.js';
import { removeTempDirs } from '../store/helpers/tmp.js';
import { warnIfSkipped } from '../store/helpers/pg.js';
import { hasEngineLog, type EngineLogStore, type TranscriptStore } from '../../src/store/index.js';
import { expectLogIsHistory, readLog } from './helpers.js';
import { drive } from './day.js';

warnIfSkipped('engine-log.test.ts');
afterAll(removeTempDirs);

const key = generateEngineKey('tally.example/desk');

describe.each(STORE_KINDS.map((k) => [k.label, k] as const))('engine log on %s', (_label, kind) => {
  it.skipIf(kind.skip)('records opens and every signed session checkpoint, in order, exactly once', async () => {
    const env = await kind.fresh();
    try {
      const store = env.store as TranscriptStore & EngineLogStore;
      expect(hasEngineLog(store)).toBe(true);
      const engine = createEngine({ store });
      const notary = createNotary({ key });
      const a = await drive(engine, 'log-a', 3);
      const again = await engine.open({ name: 'log-a' });
      expect(again.ok && again.created).toBe(false);
      const b = await drive(engine, 'log-b', 2);
      expect((await readLog(store)).map((l) => l.kind)).toEqual(['open', 'open']);

      const c5 = await notary.issueCheckpoint(engine, a, 5);
      expect(c5.ok).toBe(true);
      // The same checkpoint again is the same signature: no second leaf.
      await notary.issueCheckpoint(engine, a, 5);
      const sealed = await notary.sealWithReceipt(engine, b);
      if (!sealed.ok) throw new Error(sealed.message);
      // After the seal, the full checkpoint of b is the seal again: a duplicate.
      await notary.issueCheckpoint(engine, b);
      const leaves = await expectLogIsHistory(store, key.name);
      expect(leaves).toEqual([
        { kind: 'open', session: a, spec: expect.stringMatching(/^[0-9a-f]{64}$/) },
        { kind: 'open', session: b, spec: expect.stringMatching(/^[0-9a-f]{64}$/) },
        { kind: 'checkpoint', origin: `${key.name}/${a}`, size: 5, root: c5.ok ? c5.root : '', seal: false },
        { kind: 'checkpoint', origin: `${key.name}/${b}`, size: sealed.checkpoint.size, root: sealed.checkpoint.root, seal: true },
      ]);
      // A session finalized without the notary: its first full checkpoint is still the seal.
      const fin = await engine.finalize(a);
      expect(fin.ok).toBe(true);
      const full = await notary.issueCheckpoint(engine, a);
      expect(full.ok && full.size).toBe(fin.ok ? fin.receipt.size : -1);
      expect((await readLog(store)).at(-1)).toMatchObject({ kind: 'checkpoint', size: full.ok ? full.size : -1, seal: true });
      await expectLogIsHistory(store, key.name);
    } finally {
      await env.dispose();
    }
  });

  it.skipIf(kind.skip)('one log key per store: the first engine log records it, another origin or key is refused (TALLY_LOG_KEY_MISMATCH) and signs nothing', async () => {
    const env = await kind.fresh();
    try {
      const store = env.store as TranscriptStore & EngineLogStore;
      await drive(createEngine({ store }), 'log-key', 2);
      const logKey = generateEngineKey('tally.example/desk/log');
      const first = await new EngineLog({ store, key: logKey }).checkpoint();
      // Another origin, and another key under the same origin name: each would be a second log over the same leaves.
      for (const other of [generateEngineKey('tally.local/log'), generateEngineKey('tally.example/desk/log')]) {
        const log = new EngineLog({ store, key: other });
        await expect(log.checkpoint()).rejects.toMatchObject({ code: 'TALLY_LOG_KEY_MISMATCH' });
        await expect(log.latest()).rejects.toMatchObject({ code: 'TALLY_LOG_KEY_MISMATCH' });
        expect(await store.claimEngineLogKey(other.name, other.verifierKey)).toEqual({ origin: logKey.name, verifierKey: logKey.verifierKey });
      }
      expect(await store.signedCheckpoints('tally.local/log')).toEqual([]);
      // The recorded key goes on signing, unchanged.
      expect((await new EngineLog({ store, key: logKey }).latest())?.signedCheckpoint).toBe(first.signedCheckpoint);
    } finally {
      await env.dispose();
    }
  });

  it.skipIf(kind.skip)('a refused signature leaves no leaf', async () => {
    const env = await kind.fresh();
    try {
      const store = env.store as TranscriptStore & EngineLogStore;
      const engine = createEngine({ store });
      const sid = await drive(engine, 'log-refused', 2);
      const origin = `${key.name}/${sid}`;
      // The signing log already holds another root for size 3 (as if the store's entries had been rewritten).
      const planted = await store.recordCheckpoint({ origin, size: 3, root: 'ab'.repeat(32), signedAt: 1 }, undefined);
      expect(planted.ok).toBe(true);
      const before = await store.engineLogSize();
      await expect(createNotary({ key }).issueCheckpoint(engine, sid, 3)).rejects.toBeInstanceOf(SigningRefusedError);
      expect(await store.engineLogSize()).toBe(before);
    } finally {
      await env.dispose();
    }
  });
});
