/**
 * The notary's trees keep only subtrees of 2^floor entries and up and read a
 * proof's chunk again from the store: every root, proof, checkpoint and turn
 * receipt equals the one a notary keeping every node (floor 0) gives, the
 * signing log's consistency check loads the chunk it needs, and a stored
 * chunk that changed after the tree was built is refused, never proved.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { SessionTrees, createNotary, generateEngineKey, indexBundle, turnReceiptFromBundle } from '../../src/receipt/index.js';
import { encodeBundle } from '../../src/codec/index.js';
import { StoreCorruptionError } from '../../src/session/index.js';
import { MemoryStore, type StoredEntry } from '../../src/store/index.js';
import { toHex } from '../../src/protocol/index.js';
import { runDay } from '../helpers/day.js';

const key = generateEngineKey('tally.example/floor');
const now = () => 1_700_000_000_000;
const hex = (a: readonly Uint8Array[]) => a.map(toHex);

/** A memory store whose reads of `index` return other (self-consistent) bytes once `tamper` is set. */
class TamperingStore extends MemoryStore {
  tamper: number | undefined;
  override async readRange(sessionId: string, from: number, to: number): Promise<StoredEntry[]> {
    const rows = await super.readRange(sessionId, from, to);
    const t = this.tamper;
    if (t === undefined) return rows;
    const [donor] = await super.readRange(sessionId, t + 2, t + 3); // an entry of the same kind two places on
    return rows.map((r) => (r.index === t && donor ? { ...donor, index: t } : r));
  }
}

async function day(store = new MemoryStore()) {
  const engine = createEngine({ store });
  const { sid, lines } = await runDay({ engine, wakes: 40 }); // 84 entries
  return { engine, sid, size: lines.length };
}

describe('notary trees with a floor', () => {
  it('roots, inclusion and consistency proofs, checkpoints and turn receipts equal the floor-0 notary (seed 0xf1d0)', async () => {
    const { engine, sid, size } = await day();
    const full = createNotary({ key, now, trees: new SessionTrees({ floor: 0 }) });
    const floored = createNotary({ key, now, trees: new SessionTrees({ floor: 2 }) });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: size }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 1, max: n }), fc.nat({ max: n - 1 }))), async ([n, m, i]) => {
        const a = await full.inclusionProof(engine, sid, i, n);
        const b = await floored.inclusionProof(engine, sid, i, n);
        expect(a.ok && b.ok).toBe(true);
        if (a.ok && b.ok) expect({ ...b, proof: hex(b.proof) }).toEqual({ ...a, proof: hex(a.proof) });
        const c = await full.consistencyProof(engine, sid, m, n);
        const d = await floored.consistencyProof(engine, sid, m, n);
        if (c.ok && d.ok) expect({ ...d, proof: hex(d.proof) }).toEqual({ ...c, proof: hex(c.proof) });
        else expect.unreachable('both notaries prove consistency');
        expect(await floored.issueCheckpoint(engine, sid, n)).toEqual(await full.issueCheckpoint(engine, sid, n));
        expect(await floored.turnReceipt(engine, sid, i, { size: n })).toEqual(await full.turnReceipt(engine, sid, i, { size: n }));
      }),
      { seed: 0xf1d0, numRuns: 40 },
    );
  });

  it('a fresh floored notary signs past an earlier checkpoint: the log\'s consistency check loads its chunk', async () => {
    const { engine, sid, size } = await day();
    const first = await createNotary({ key, now }).issueCheckpoint(engine, sid, 10);
    expect(first.ok).toBe(true);
    const later = await createNotary({ key, now, trees: new SessionTrees({ floor: 2 }) }).issueCheckpoint(engine, sid, size);
    const reference = await createNotary({ key, now, trees: new SessionTrees({ floor: 0 }) }).issueCheckpoint(engine, sid, size);
    expect(later).toEqual(reference);
    expect(later.ok).toBe(true);
  });

  it('a chunk whose stored entry changed after the tree was built is refused as store corruption', async () => {
    const store = new TamperingStore();
    const { engine, sid, size } = await day(store);
    const notary = createNotary({ key, now, trees: new SessionTrees({ floor: 2 }) });
    expect((await notary.issueCheckpoint(engine, sid, size)).ok).toBe(true);
    store.tamper = 5;
    await expect(notary.inclusionProof(engine, sid, 6, size)).rejects.toBeInstanceOf(StoreCorruptionError);
    await expect(notary.inclusionProof(engine, sid, 6, size)).rejects.toThrow(/changed since the tree was built/);
    // Chunks that were not touched still prove.
    expect((await notary.inclusionProof(engine, sid, 20, size)).ok).toBe(true);
  });
});

describe('indexBundle with a floor (what tally prove runs)', () => {
  it('receipts of the kept entries at the kept sizes equal the full tree\'s; others say entry-not-loaded (seed 0xb0f1)', async () => {
    const { engine, sid, size } = await day();
    const lines: Uint8Array[] = [];
    for await (const l of engine.exportEntries(sid)) lines.push(l);
    const bundle = encodeBundle(lines);
    const notary = createNotary({ key, now });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: size }).chain((m) => fc.tuple(fc.constant(m), fc.nat({ max: m - 1 }))), async ([m, i]) => {
        const cp = await notary.issueCheckpoint(engine, sid, m);
        if (!cp.ok) return expect.unreachable(cp.message);
        const full = await indexBundle([bundle], { entries: [i] });
        const floored = await indexBundle([bundle], { entries: [i], sizes: [m], floor: 2 });
        if (!full.ok || !floored.ok) return expect.unreachable('the bundle verifies');
        expect(turnReceiptFromBundle(floored, i, cp.signedCheckpoint, { verifiers: [key.verifierKey] })).toEqual(turnReceiptFromBundle(full, i, cp.signedCheckpoint, { verifiers: [key.verifierKey] }));
        expect(floored.tree.byteLength).toBeLessThan(full.tree.byteLength);
      }),
      { seed: 0xb0f1, numRuns: 30 },
    );
    const cp = await notary.issueCheckpoint(engine, sid, size);
    if (!cp.ok) return expect.unreachable(cp.message);
    const kept = await indexBundle([bundle], { entries: [3], sizes: [size], floor: 2 });
    if (!kept.ok) return expect.unreachable('the bundle verifies');
    expect(turnReceiptFromBundle(kept, 3, cp.signedCheckpoint, { verifiers: [key.verifierKey] }).ok).toBe(true);
    expect(turnReceiptFromBundle({ ...kept, entries: new Map([[40, lines[40]!]]) }, 40, cp.signedCheckpoint, { verifiers: [key.verifierKey] })).toMatchObject({ ok: false, code: 'entry-not-loaded' });
  });
});
