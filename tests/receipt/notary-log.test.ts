/**
 * Every signing path of the notary goes through the store's signing log:
 * the seal receipt, checkpoints, fresh turn receipts and consistency proofs
 * are recorded before they are signed, and none is signed from a store whose
 * history is no longer what the key signed.
 */
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/codec/index.js';
import { entryHash, toHex } from '../../src/protocol/index.js';
import { createNotary, generateEngineKey, openSessionCheckpoint, parseTlogProof, SigningRefusedError } from '../../src/receipt/index.js';
import { createEngine } from '../../src/engine.js';
import { MemoryStore, type TranscriptStore } from '../../src/store/index.js';
import { entriesOf, intentDay, linesOf, reseal } from './fixtures.js';

const key = generateEngineKey('tally.example/desk');

describe('the notary records before it signs', () => {
  it('checkpoint, seal receipt, fresh turn receipt and consistency proof each leave their record; a proof against a given checkpoint signs nothing', async () => {
    const store = new MemoryStore();
    const engine = createEngine({ store });
    const { sid } = await intentDay({ engine, name: 'logged-day' });
    let t = 1_000;
    const notary = createNotary({ key, now: () => t++ });
    const origin = `${key.name}/${sid}`;
    const sizes = async () => (await store.signedCheckpoints(origin)).map((r) => [r.size, r.signedAt]);

    const cp5 = await notary.issueCheckpoint(engine, sid, 5);
    expect(cp5.ok && cp5.origin).toBe(origin);
    expect(await sizes()).toEqual([[5, 1_000]]);
    const tr = await notary.turnReceipt(engine, sid, 2, { size: 9 });
    expect(tr.ok).toBe(true);
    expect(await sizes()).toEqual([[5, 1_000], [9, 1_001]]);
    const c = await notary.consistencyProofText(engine, sid, 5, 11);
    expect(c.ok).toBe(true);
    const sealed = await notary.sealWithReceipt(engine, sid);
    if (!sealed.ok) throw new Error('seal');
    expect(await sizes()).toEqual([[5, 1_000], [9, 1_001], [11, 1_002], [14, 1_003]]);
    // Signing the same checkpoint again is a duplicate: the same bytes, the first record kept.
    const again = await notary.issueCheckpoint(engine, sid);
    expect(again.ok && again.signedCheckpoint).toBe(sealed.signedCheckpoint);
    expect((await store.latestCheckpoint(origin))?.signedAt).toBe(1_003);
    // A receipt against a checkpoint the caller holds signs nothing new.
    const held = await notary.turnReceipt(engine, sid, 3, { signedCheckpoint: cp5.ok ? cp5.signedCheckpoint : '' });
    expect(held.ok).toBe(true);
    expect(await store.signedCheckpoints(origin)).toHaveLength(4);
    // Every record is a checkpoint the key signed, and opens with its verifier key.
    const text = tr.ok ? tr.text : '';
    const p = parseTlogProof(text);
    expect(p.ok && openSessionCheckpoint(p.tlogProof.signedCheckpoint, [key.verifierKey])).toMatchObject({ ok: true, checkpoint: { size: 9 } });
  });

  it('a store whose entries changed after a signature: every signing path throws SigningRefusedError and signs nothing', async () => {
    const base = new MemoryStore();
    const engine = createEngine({ store: base });
    const { sid } = await intentDay({ engine, name: 'rewritten-day' });
    const notary = createNotary({ key });
    const sealed = await notary.sealWithReceipt(engine, sid);
    if (!sealed.ok) throw new Error('seal');
    // The same store, but from entry 4 on it answers a re-sealed forgery's bytes (same session id).
    const lines = await linesOf(engine, sid);
    const forged = reseal(entriesOf(lines).map((e, i) => (i === 4 && e.kind === 'turn' ? { ...e, ruling: { intent: { admitted: true } } } : e))).lines;
    const rewritten: TranscriptStore = Object.create(base) as TranscriptStore;
    Object.assign(rewritten, {
      readRange: async (s: string, from: number, to: number) =>
        (await base.readRange(s, from, to)).map((r) => (r.index >= 4 ? { ...r, bytes: forged[r.index]!, hash: hashOf(forged[r.index]!) } : r)),
    });
    const forgedEngine = { store: rewritten, finalize: engine.finalize.bind(engine) };
    const fresh = createNotary({ key });
    const refused = (code: string) => expect.objectContaining({ code, name: 'SigningRefusedError' });
    await expect(fresh.issueCheckpoint(forgedEngine, sid)).rejects.toEqual(refused('TALLY_SIGN_EQUIVOCATION'));
    await expect(fresh.issueCheckpoint(forgedEngine, sid, 6)).rejects.toEqual(refused('TALLY_SIGN_INCONSISTENT'));
    await expect(fresh.turnReceipt(forgedEngine, sid, 5, { size: 7 })).rejects.toBeInstanceOf(SigningRefusedError);
    await expect(fresh.consistencyProofText(forgedEngine, sid, 2, 8)).rejects.toBeInstanceOf(SigningRefusedError);
    await expect(fresh.sealWithReceipt(forgedEngine, sid)).rejects.toMatchObject({ code: 'TALLY_RECEIPT_ROOT_MISMATCH' });
    expect((await base.signedCheckpoints(`${key.name}/${sid}`)).map((r) => r.size)).toEqual([14]);
  });
});

function hashOf(bytes: Uint8Array): string {
  return toHex(entryHash(sha256, bytes));
}
