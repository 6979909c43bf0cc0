import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { createNotary, formatConsistencyProof, generateEngineKey, parseConsistencyProof, verifyCheckpointConsistency, type VerifyConsistencyResult } from '../../src/receipt/index.js';
import { intentDay } from './fixtures.js';

const key = generateEngineKey('tally.example/desk');
const notary = createNotary({ key });
const engine = createEngine();
const { sid } = await intentDay({ engine, name: 'monitored' });
const sealed = await notary.sealWithReceipt(engine, sid);
if (!sealed.ok) throw new Error(sealed.message);
const size = sealed.receipt.size;
const cps: string[] = [''];
for (let n = 1; n <= size; n++) {
  const c = await notary.issueCheckpoint(engine, sid, n);
  cps.push(c.ok ? c.signedCheckpoint : '');
}
const outcome = (r: VerifyConsistencyResult) => (r.ok ? 'ok' : `${r.stage}/${r.code}`);

describe('a monitor proves the session only grew', () => {
  it('every pair of checkpoints is consistent; the text form round-trips (seed 0xc0de)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: size }).chain((b) => fc.tuple(fc.integer({ min: 1, max: b }), fc.constant(b))), async ([a, b]) => {
        const t = await notary.consistencyProofText(engine, sid, a, b);
        expect(t.ok).toBe(true);
        const p = parseConsistencyProof(t.ok ? t.text : '');
        expect(p.ok && formatConsistencyProof(p.consistencyProof)).toBe(t.ok && t.text);
        expect(p.ok && outcome(verifyCheckpointConsistency(cps[a]!, p.consistencyProof.signedCheckpoint, p.consistencyProof.proof, { verifiers: [key] }))).toBe('ok');
      }),
      { seed: 0xc0de, numRuns: 60 },
    );
  });

  it('a fork is caught: a checkpoint of a different history at a larger size', async () => {
    // A second engine (its own store) grows the same genesis differently and signs with the same key.
    const other = createEngine();
    const forked = await intentDay({ engine: other, name: 'monitored', nonceBase: 90 }); // same spec → same session id
    expect(forked.sid).toBe(sid);
    const forkCp = await notary.issueCheckpoint(other, forked.sid);
    const p = await notary.consistencyProof(other, forked.sid, 5, forkCp.ok ? forkCp.size : 0);
    expect(outcome(verifyCheckpointConsistency(cps[5]!, forkCp.ok ? forkCp.signedCheckpoint : '', p.ok ? p.proof : [], { verifiers: [key] }))).toBe('consistency/root-mismatch');
  });

  it('order, origin, key and a flipped proof bit are each named', async () => {
    const p = await notary.consistencyProof(engine, sid, 4, 11);
    const proof = p.ok ? p.proof : [];
    expect(outcome(verifyCheckpointConsistency(cps[11]!, cps[4]!, proof, { verifiers: [key] }))).toBe('consistency/size-order');
    const other = await intentDay({ engine, name: 'elsewhere', nonceBase: 70 });
    const oc = await notary.issueCheckpoint(engine, other.sid, 11);
    expect(outcome(verifyCheckpointConsistency(cps[4]!, oc.ok ? oc.signedCheckpoint : '', proof, { verifiers: [key] }))).toBe('consistency/different-logs');
    const r = verifyCheckpointConsistency(cps[4]!, cps[11]!, proof, { verifiers: [generateEngineKey('tally.example/desk')] });
    expect(!r.ok && r.stage === 'note' && r.which).toBe('older');
    for (let i = 0; i < proof.length; i++) {
      const bad = proof.map((h, j) => (j === i ? Uint8Array.from(h, (x, k) => (k === 0 ? x ^ 1 : x)) : h));
      expect(outcome(verifyCheckpointConsistency(cps[4]!, cps[11]!, bad, { verifiers: [key] }))).toBe('consistency/root-mismatch');
    }
    expect(outcome(verifyCheckpointConsistency(cps[4]!, cps[11]!, proof.slice(1), { verifiers: [key] }))).toBe('consistency/wrong-proof-size');
    expect(outcome(verifyCheckpointConsistency(cps[7]!, cps[7]!, [], { verifiers: [key] }))).toBe('ok');
  });

  it('parse rejects malformed texts', () => {
    const ok = formatConsistencyProof({ oldSize: 3, proof: [new Uint8Array(32)], signedCheckpoint: cps[5]! });
    expect(parseConsistencyProof(ok).ok).toBe(true);
    expect(parseConsistencyProof(ok.replace('old 3', 'old 03'))).toMatchObject({ ok: false, code: 'bad-old-size' });
    expect(parseConsistencyProof(ok.replace('AAAA', 'AA!A'))).toMatchObject({ ok: false, code: 'bad-proof-hash' });
    expect(parseConsistencyProof(`old 3\n${'A'.repeat(43)}=\n`)).toMatchObject({ ok: false, code: 'missing-checkpoint' });
    expect(() => formatConsistencyProof({ oldSize: 3, proof: [new Uint8Array(31)], signedCheckpoint: cps[5]! })).toThrow(/32 bytes/);
  });
});
