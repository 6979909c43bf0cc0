import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import {
  SessionTrees,
  createNotary,
  formatVerifierKey,
  generateEngineKey,
  openSessionCheckpoint,
  parseCheckpoint,
  parseConsistencyProof,
  signNote,
  verifyCheckpointConsistency,
  verifyTurnReceipt,
} from '../../src/receipt/index.js';
import { consistencyProofFromLeafHashes, inclusionProofFromLeafHashes, rfc6962Hasher, rootFromLeafHashes, toHex } from '../../src/protocol/index.js';
import { MemoryStore, type TranscriptStore } from '../../src/store/index.js';
import { intentDay, linesOf } from './fixtures.js';
import { runDay } from '../helpers/day.js';

// An independent digest (noble) for the reference tree the notary is checked against.
const ref = rfc6962Hasher(nobleSha256);
const key = generateEngineKey('tally.example/desk');
const hex = (a: readonly Uint8Array[]) => a.map(toHex);

async function sealedDay() {
  const { engine, sid } = await intentDay({ name: 'notary-day' });
  const notary = createNotary({ key });
  const sealed = await notary.sealWithReceipt(engine, sid, { note: 'sealed' });
  if (!sealed.ok) throw new Error(sealed.message);
  const lines = await linesOf(engine, sid);
  return { engine, sid, notary, sealed, lines, leaves: lines.map((l) => ref.hashLeaf(l)) };
}

describe('the notary: signed session checkpoints', () => {
  it('sealWithReceipt returns the engine receipt and a C2SP checkpoint over every entry, signed by the engine key', async () => {
    const { sid, sealed, lines, leaves } = await sealedDay();
    expect(sealed.receipt.size).toBe(lines.length);
    const text = sealed.signedCheckpoint;
    expect(text.split('\n').slice(0, 3)).toEqual([`tally.example/desk/${sid}`, String(lines.length), Buffer.from(rootFromLeafHashes(ref, leaves)).toString('base64')]);
    expect(text).toMatch(/\n\n— tally\.example\/desk [A-Za-z0-9+/]+=*\n$/);
    const opened = openSessionCheckpoint(text, [key.verifierKey]);
    expect(opened.ok && [opened.checkpoint.sessionId, opened.checkpoint.size, opened.checkpoint.root]).toEqual([sid, lines.length, sealed.receipt.receiptRoot]);
  });

  it('sealing again with the same artifacts returns the same receipt and an identically signed checkpoint (Ed25519 is deterministic)', async () => {
    const { engine, sid, notary, sealed } = await sealedDay();
    const again = await notary.sealWithReceipt(engine, sid, { note: 'sealed' });
    expect(again.ok && again.duplicate).toBe(true);
    expect(again.ok && again.signedCheckpoint).toBe(sealed.signedCheckpoint);
    const other = await notary.sealWithReceipt(engine, sid, { note: 'other' });
    expect(other).toMatchObject({ ok: false, diagnostic: 'sealed' });
  });

  it('issues a checkpoint at every size during and after the session; each root is the reference root', async () => {
    const { engine, sid, notary, leaves } = await sealedDay();
    for (let n = 1; n <= leaves.length; n++) {
      const cp = await notary.issueCheckpoint(engine, sid, n);
      expect(cp.ok && cp.root).toBe(toHex(rootFromLeafHashes(ref, leaves.slice(0, n))));
      const parsed = cp.ok && parseCheckpoint(cp.signedCheckpoint.slice(0, cp.signedCheckpoint.indexOf('\n\n') + 1));
      expect(parsed && parsed.ok && parsed.checkpoint.size).toBe(n);
    }
    expect(await notary.issueCheckpoint(engine, sid, 0)).toMatchObject({ ok: false, code: 'size-out-of-range' });
    expect(await notary.issueCheckpoint(engine, sid, leaves.length + 1)).toMatchObject({ ok: false, code: 'size-out-of-range' });
    expect(await notary.issueCheckpoint(engine, sid, 1.5)).toMatchObject({ ok: false, code: 'size-out-of-range' });
    expect(await notary.issueCheckpoint(engine, 'ab'.repeat(32))).toMatchObject({ ok: false, code: 'unknown-session' });
  });

  it('a checkpoint issued mid-session follows the session as it grows', async () => {
    const engine = createEngine();
    const notary = createNotary({ key });
    const { sid } = await intentDay({ engine, name: 'growing' });
    const first = await notary.issueCheckpoint(engine, sid);
    expect(first.ok && first.size).toBe(13);
    const fin = await notary.sealWithReceipt(engine, sid);
    expect(fin.ok && fin.checkpoint.size).toBe(14);
    const p = await notary.consistencyProof(engine, sid, 13, 14);
    expect(p.ok).toBe(true);
    const r = verifyCheckpointConsistency(first.ok ? first.signedCheckpoint : '', fin.ok ? fin.signedCheckpoint : '', p.ok ? p.proof : [], { verifiers: [key.verifierKey] });
    expect(r.ok).toBe(true);
  });
});

describe('the notary: the latest signed checkpoint (a session tiles checkpoint)', () => {
  it('is undefined for an unknown or never-signed session, then the largest size signed, as the same bytes, and signs nothing', async () => {
    const { engine, sid } = await runDay({ wakes: 4 });
    const notary = createNotary({ key });
    expect(await notary.latestCheckpoint(engine, 'ab'.repeat(32))).toBeUndefined();
    expect(await notary.latestCheckpoint(engine, sid)).toBeUndefined();
    const five = await notary.issueCheckpoint(engine, sid, 5);
    const three = await notary.issueCheckpoint(engine, sid, 3);
    if (!five.ok || !three.ok) throw new Error('sign');
    const latest = await notary.latestCheckpoint(engine, sid);
    expect(latest).toEqual({ sessionId: sid, origin: five.origin, size: 5, root: five.root, signedCheckpoint: five.signedCheckpoint });
    expect((await engine.store.signedCheckpoints(five.origin)).map((r) => r.size).sort()).toEqual([3, 5]);
  });
});

describe('proofs from the per-session tree', () => {
  it('inclusion proofs of every entry at every size equal the reference (independent digest)', async () => {
    const { engine, sid, notary, leaves } = await sealedDay();
    for (let n = 1; n <= leaves.length; n++) {
      for (let i = 0; i < n; i++) {
        const p = await notary.inclusionProof(engine, sid, i, n);
        expect(p.ok && hex(p.proof)).toEqual(hex(inclusionProofFromLeafHashes(ref, leaves.slice(0, n), i)));
      }
    }
    expect(await notary.inclusionProof(engine, sid, leaves.length)).toMatchObject({ ok: false, code: 'index-out-of-range' });
    expect(await notary.inclusionProof(engine, sid, 2, 2)).toMatchObject({ ok: false, code: 'index-out-of-range' });
  });

  it('consistency proofs between every pair of sizes equal the reference and verify as checkpoints', async () => {
    const { engine, sid, notary, leaves } = await sealedDay();
    for (let a = 1; a <= leaves.length; a++) {
      for (let b = a; b <= leaves.length; b++) {
        const p = await notary.consistencyProof(engine, sid, a, b);
        expect(p.ok && hex(p.proof)).toEqual(hex(consistencyProofFromLeafHashes(ref, leaves.slice(0, b), a)));
      }
    }
    const text = await notary.consistencyProofText(engine, sid, 5, 11);
    const parsed = text.ok ? parseConsistencyProof(text.text) : undefined;
    expect(parsed?.ok && parsed.consistencyProof.oldSize).toBe(5);
    const older = await notary.issueCheckpoint(engine, sid, 5);
    const r = verifyCheckpointConsistency(older.ok ? older.signedCheckpoint : '', parsed?.ok ? parsed.consistencyProof.signedCheckpoint : '', parsed?.ok ? parsed.consistencyProof.proof : [], { verifiers: [key] });
    expect(r.ok).toBe(true);
    expect(await notary.consistencyProof(engine, sid, 0, 3)).toMatchObject({ ok: false, code: 'size-out-of-range' });
    expect(await notary.consistencyProof(engine, sid, 4, 3)).toMatchObject({ ok: false, code: 'size-out-of-range' });
  });

  it('single-turn receipts of every entry verify with the verifier key alone (random entry and size, seed 0x5eed)', async () => {
    const { engine, sid, notary, lines } = await sealedDay();
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: lines.length }).chain((n) => fc.tuple(fc.constant(n), fc.nat({ max: n - 1 }))), async ([n, i]) => {
        const r = await notary.turnReceipt(engine, sid, i, { size: n });
        expect(r.ok).toBe(true);
        const v = verifyTurnReceipt(r.ok ? r.text : '', { verifiers: [key.verifierKey] });
        expect(v.ok && [v.index, v.sessionId, v.checkpoint.size, Buffer.from(v.entryBytes).equals(Buffer.from(lines[i]!))]).toEqual([i, sid, n, true]);
      }),
      { seed: 0x5eed, numRuns: 60 },
    );
  });

  it('a receipt against a given (cosigned) checkpoint keeps it verbatim; a checkpoint of another state is refused', async () => {
    const { engine, sid, notary, sealed } = await sealedDay();
    const witness = generateEngineKey('witness.example');
    const split = sealed.signedCheckpoint.indexOf('\n\n');
    const text = sealed.signedCheckpoint.slice(0, split + 1);
    // A witness cosignature appended to the engine's (witnesses sign the same text).
    const cosigned = sealed.signedCheckpoint + signNote(text, [witness]).slice(text.length + 1);
    const r = await notary.turnReceipt(engine, sid, 4, { signedCheckpoint: cosigned });
    expect(r.ok && r.text.endsWith(cosigned)).toBe(true);
    // Verifies with the engine key alone (the unknown witness line is ignored) and with both pinned.
    expect(verifyTurnReceipt(r.ok ? r.text : '', { verifiers: [key.verifierKey] }).ok).toBe(true);
    const both = verifyTurnReceipt(r.ok ? r.text : '', { verifiers: [key.verifierKey, formatVerifierKey(witness.name, witness.publicKey)] });
    expect(both.ok && both.checkpoint.signedBy.map((s) => s.name)).toEqual(['tally.example/desk', 'witness.example']);
    const otherDay = await runDay({ engine, name: 'another' });
    const foreign = await notary.issueCheckpoint(engine, otherDay.sid);
    expect(await notary.turnReceipt(engine, sid, 1, { signedCheckpoint: foreign.ok ? foreign.signedCheckpoint : '' })).toMatchObject({ ok: false, code: 'checkpoint-mismatch' });
    const stranger = createNotary({ key: generateEngineKey('tally.example/desk') });
    const strangers = await stranger.issueCheckpoint(engine, sid);
    expect(await notary.turnReceipt(engine, sid, 1, { signedCheckpoint: strangers.ok ? strangers.signedCheckpoint : '' })).toMatchObject({ ok: false, code: 'checkpoint-mismatch' });
  });
});

describe('SessionTrees: built once, then only extended', () => {
  /** The real memory store, counting the rows it hands out. */
  function counted(store: TranscriptStore): { store: TranscriptStore; rows: () => number } {
    let rows = 0;
    const wrapped: TranscriptStore = Object.create(store) as TranscriptStore;
    Object.assign(wrapped, {
      readRange: async (sid: string, from: number, to: number) => {
        const r = await store.readRange(sid, from, to);
        rows += r.length;
        return r;
      },
    });
    return { store: wrapped, rows: () => rows };
  }

  it('reads every entry once, then only the new ones; proofs read nothing', async () => {
    const base = new MemoryStore();
    const engine = createEngine({ store: base });
    const { sid } = await intentDay({ engine, name: 'counted' });
    const c = counted(base);
    const trees = new SessionTrees();
    const t1 = await trees.sync(c.store, sid);
    expect([t1?.size, c.rows()]).toEqual([13, 13]);
    await trees.sync(c.store, sid);
    expect(c.rows()).toBe(13);
    expect((await engine.finalize(sid)).ok).toBe(true);
    const t2 = await trees.sync(c.store, sid);
    expect([t2?.size, c.rows()]).toEqual([14, 14]);
    t2?.inclusionProof(3, 14);
    t2?.consistencyProof(7, 14);
    expect(c.rows()).toBe(14);
  });

  it('keeps at most maxEntries over all trees, dropping the least recently used (never the one in use)', async () => {
    const base = new MemoryStore();
    const engine = createEngine({ store: base });
    const a = await intentDay({ engine, name: 'lru-a' });
    const b = await intentDay({ engine, name: 'lru-b', nonceBase: 30 });
    const c = counted(base);
    const trees = new SessionTrees({ maxEntries: 20 });
    await trees.sync(c.store, a.sid);
    await trees.sync(c.store, b.sid); // 26 > 20: a is dropped
    expect(c.rows()).toBe(26);
    await trees.sync(c.store, b.sid);
    expect(c.rows()).toBe(26);
    await trees.sync(c.store, a.sid); // rebuilt; now b is dropped
    expect(c.rows()).toBe(39);
    const tiny = new SessionTrees({ maxEntries: 1 });
    expect((await tiny.sync(c.store, a.sid))?.size).toBe(13); // the tree in use is kept whatever the budget
  });

  it('a stored hash that is not the hash of the stored bytes is corruption, not a checkpoint', async () => {
    const base = new MemoryStore();
    const engine = createEngine({ store: base });
    const { sid } = await intentDay({ engine, name: 'corrupt' });
    const bad: TranscriptStore = Object.create(base) as TranscriptStore;
    Object.assign(bad, {
      readRange: async (s: string, from: number, to: number) => (await base.readRange(s, from, to)).map((r) => (r.index === 5 ? { ...r, hash: '00'.repeat(32) } : r)),
    });
    await expect(new SessionTrees().sync(bad, sid)).rejects.toMatchObject({ code: 'TALLY_STORE_CORRUPT', index: 5 });
  });
});
