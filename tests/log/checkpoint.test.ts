/**
 * Engine-log checkpoints: C2SP tlog-checkpoints whose origin is the log
 * key's name, signed only through the signing log, each consistent with the
 * last; the cadence rule; and a store that lost leaves is refused.
 */
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { EngineLog } from '../../src/log/index.js';
import { entryHash, fromHex, rfc6962Hasher, rootFromLeafHashes, toHex, verifyConsistency } from '../../src/protocol/index.js';
import { createNotary, generateEngineKey, openNote, parseCheckpoint } from '../../src/receipt/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { drive } from './day.js';

const engineKey = generateEngineKey('tally.example/desk');
const logKey = generateEngineKey('tally.example/desk/log');
const hasher = rfc6962Hasher(sha256);

async function day(store: MemoryStore, name: string): Promise<void> {
  const engine = createEngine({ store });
  const sid = await drive(engine, name, 2);
  const sealed = await createNotary({ key: engineKey }).sealWithReceipt(engine, sid);
  if (!sealed.ok) throw new Error(sealed.message);
}

describe('engine log checkpoints', () => {
  it('are C2SP checkpoints with origin = key name, over every stored leaf, opening with the published key', async () => {
    const store = new MemoryStore();
    await day(store, 'cp-1');
    const log = new EngineLog({ store, key: logKey });
    expect(log.origin).toBe('tally.example/desk/log');
    const cp = await log.checkpoint();
    const opened = openNote(cp.signedCheckpoint, [logKey.verifierKey]);
    if (!opened.ok) throw new Error(opened.message);
    const parsed = parseCheckpoint(opened.text);
    if (!parsed.ok) throw new Error(parsed.message);
    const leaves = await store.engineLogLeaves(0, 100);
    expect(parsed.checkpoint.origin).toBe(logKey.name);
    expect(parsed.checkpoint.size).toBe(leaves.length);
    expect(toHex(parsed.checkpoint.root)).toBe(toHex(rootFromLeafHashes(hasher, leaves.map((l) => entryHash(sha256, l)))));
    // The engine key does not open it: only the log key signs the log.
    expect(openNote(cp.signedCheckpoint, [engineKey.verifierKey]).ok).toBe(false);
    // Recorded in the signing log under the log's origin, and no leaf of its own.
    expect(await store.signedCheckpoints(logKey.name)).toMatchObject([{ size: cp.size, root: cp.root }]);
    expect(await store.engineLogSize()).toBe(cp.size);
  });

  it('each is consistent with the last (RFC 9162 proof from the tree), and the same size is the same bytes', async () => {
    const store = new MemoryStore();
    await day(store, 'cons-1');
    const log = new EngineLog({ store, key: logKey });
    const a = await log.checkpoint();
    expect((await log.checkpoint()).signedCheckpoint).toBe(a.signedCheckpoint);
    await day(store, 'cons-2');
    await day(store, 'cons-3');
    const b = await log.checkpoint();
    expect(b.size).toBe(a.size * 3);
    const proof = await log.consistencyProof(a.size, b.size);
    expect(verifyConsistency(hasher, a.size, b.size, proof, fromHex(a.root), fromHex(b.root))).toEqual({ ok: true });
    expect((await store.signedCheckpoints(logKey.name)).map((r) => r.size)).toEqual([a.size, b.size]);
  });

  it('a second engine log over a store whose leaves were rewritten is refused at start-up (not the tree signed), and signs nothing', async () => {
    const store = new MemoryStore();
    await day(store, 'rw-1');
    await new EngineLog({ store, key: logKey }).checkpoint();
    await day(store, 'rw-2');
    // The same store, but leaf 0 now answers other bytes (a tampered or different database).
    const real = store.engineLogLeaves.bind(store);
    const forged = Object.assign(Object.create(store) as MemoryStore, {
      engineLogLeaves: async (from: number, to: number) => (await real(from, to)).map((l, i) => (from + i === 0 ? new Uint8Array([...l, 0x20]) : l)),
    });
    const log = new EngineLog({ store: forged, key: logKey });
    await expect(log.checkpoint()).rejects.toMatchObject({ code: 'TALLY_LOG_ROLLED_BACK' });
    await expect(log.latest()).rejects.toMatchObject({ code: 'TALLY_LOG_ROLLED_BACK' });
    expect(await store.signedCheckpoints(logKey.name)).toHaveLength(1);
  });

  it('a store that answers fewer leaves than were read is refused (TALLY_LOG_ROLLED_BACK)', async () => {
    const store = new MemoryStore();
    await day(store, 'rb-1');
    let shrink = false;
    const real = store.engineLogSize.bind(store);
    const shrinking = Object.assign(Object.create(store) as MemoryStore, { engineLogSize: async () => (await real()) - (shrink ? 1 : 0) });
    const log = new EngineLog({ store: shrinking, key: logKey });
    await log.checkpoint();
    shrink = true;
    await expect(log.sync()).rejects.toMatchObject({ code: 'TALLY_LOG_ROLLED_BACK' });
  });

  it('cadence: a new checkpoint only when the log grew and minIntervalMs passed since the last', async () => {
    const store = new MemoryStore();
    let now = 1_000_000;
    const log = new EngineLog({ store, key: logKey, now: () => now, minIntervalMs: 5_000 });
    expect(await log.publish()).toBeUndefined();
    await day(store, 'cad-1');
    const a = await log.publish();
    expect(a?.size).toBe(2); // an open leaf and the seal's checkpoint leaf
    await day(store, 'cad-2');
    now += 4_999;
    expect((await log.publish())?.size).toBe(2);
    now += 1;
    const b = await log.publish();
    expect(b?.size).toBe(4);
    now += 60_000;
    expect((await log.publish())?.signedCheckpoint).toBe(b?.signedCheckpoint);
    expect((await store.signedCheckpoints(logKey.name)).map((r) => [r.size, r.signedAt])).toEqual([[2, 1_000_000], [4, 1_005_000]]);
  });

  it('refuses a store without an engine log', () => {
    expect(() => new EngineLog({ store: {} as MemoryStore, key: logKey })).toThrow(expect.objectContaining({ code: 'TALLY_LOG_NO_STORE' }));
  });
});
