/**
 * `tally evidence` and `tally verify-evidence` on a payment day's bundle and sealed checkpoint:
 * the pack the command writes verifies with the verifier key alone, names the payment's final
 * state and reasons, and the same pack is refused under another key or edited; `tally replay`
 * re-derives the day with the payment referee.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import { createNotary, formatConsistencyProof, generateEngineKey } from '../../src/receipt/index.js';
import { addSignatureLines, cosignerKeyFrom, createWitness, MemoryWitnessStore } from '../../src/witness/index.js';
import { tally } from '../cli/helpers.js';
import { PayDesk, paymentRequired, receiptOf, requirement, signPayment } from './fixtures.js';

describe('tally evidence / verify-evidence', () => {
  it('writes a pack for a reconciled payment and an offer_drift refusal; verify-evidence checks them offline', async () => {
    const key = generateEngineKey('tally.example/x402-cli');
    const notary = createNotary({ key });
    const desk = await PayDesk.open();
    const a = await signPayment({ seq: 1 });
    await desk.pay(a);
    await desk.pay(await signPayment({ seq: 3, accepted: requirement({ maxTimeoutSeconds: 121 }) }), { required: paymentRequired([requirement()]), settlements: [{ ticket: 1, unknown: 'timeout' }] });
    await desk.wake({ settlements: [{ ticket: 1, receipt: receiptOf(a) as never }] });
    const sealed = await notary.sealWithReceipt(desk.engine, desk.sid);
    if (!sealed.ok) throw new Error('seal');
    const lines: Uint8Array[] = [];
    for await (const l of desk.engine.exportEntries(desk.sid)) lines.push(l);
    const dir = mkdtempSync(join(tmpdir(), 'tally-x402-evidence-'));
    writeFileSync(join(dir, 'bundle.jsonl'), encodeBundle(lines));
    writeFileSync(join(dir, 'receipt.note'), sealed.signedCheckpoint);
    const base = ['bundle.jsonl', '--checkpoint', 'receipt.note', '--vkey', key.verifierKey];

    const w = tally(['evidence', ...base, '--payment', '1', '--out', 'p1.json'], { cwd: dir });
    expect(w.code, w.stderr).toBe(0);
    expect(w.stdout).toMatch(/evidence for payment 1 \(7 receipts, session [0-9a-f]{64}\) written to/);
    const v = tally(['verify-evidence', 'p1.json', '--vkey', key.verifierKey], { cwd: dir });
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/^valid: payment [0-9a-f]{64} in session/);
    expect(v.stdout).toContain('final state SETTLED (0xabab');
    expect(v.stdout).toContain('reasons: none');

    const json = JSON.parse(tally(['verify-evidence', 'p1.json', '--vkey', key.verifierKey, '--json'], { cwd: dir }).stdout) as { ok: boolean; payment: { payment_hash: string } };
    expect(json.ok).toBe(true);

    // The refused payment, by its payment hash: offer_drift.
    const entries = readFileSync(join(dir, 'bundle.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { ruling?: { x402?: { payment?: { code?: string; payment_hash: string } } } });
    const drift = entries.find((e) => e.ruling?.x402?.payment?.code === 'offer_drift')!.ruling!.x402!.payment!.payment_hash;
    expect(tally(['evidence', ...base, '--payment', drift, '--out', 'drift.json'], { cwd: dir }).code).toBe(0);
    expect(tally(['verify-evidence', 'drift.json', '--vkey', key.verifierKey], { cwd: dir }).stdout).toContain('reasons: offer_drift');

    // tally replay picks the payment referee from the spec and re-derives every ruling; the referee alone does not.
    const rp = tally(['replay', 'bundle.jsonl', '--vkey', key.verifierKey, '--checkpoint', 'receipt.note'], { cwd: dir });
    expect(rp.code, rp.stdout + rp.stderr).toBe(0);
    expect(rp.stdout).toMatch(/ruler\s+payments/);
    expect(tally(['replay', 'bundle.jsonl', '--ruler', 'referee'], { cwd: dir }).code).toBe(1);

    // Another key, an edited pack, an unknown payment, a bad selector.
    const other = generateEngineKey('tally.example/x402-cli').verifierKey;
    expect(tally(['verify-evidence', 'p1.json', '--vkey', other], { cwd: dir })).toMatchObject({ code: 1 });
    writeFileSync(join(dir, 'edited.json'), readFileSync(join(dir, 'p1.json'), 'utf8').replace('"role":"offer"', '"role":"payment"'));
    expect(tally(['verify-evidence', 'edited.json', '--vkey', key.verifierKey], { cwd: dir })).toMatchObject({ code: 1 });
    expect(tally(['evidence', ...base, '--payment', '9'], { cwd: dir }).code).toBe(1);
    expect(tally(['evidence', ...base, '--payment', 'x'], { cwd: dir }).code).toBe(2);
  }, 120_000);

  it('verify-evidence takes a witness policy as tally verify does: the pack\'s sealed checkpoint must carry the quorum of cosignatures', async () => {
    const key = generateEngineKey('tally.example/x402-witnessed');
    const notary = createNotary({ key });
    const desk = await PayDesk.open();
    await desk.pay(await signPayment({ seq: 1 }));
    const sealed = await notary.sealWithReceipt(desk.engine, desk.sid);
    if (!sealed.ok) throw new Error('seal');
    const ws = ['w1.example', 'w2.example'].map((n) => cosignerKeyFrom(generateEngineKey(n)));
    const cosigned: string[] = [];
    for (const w of ws) {
      const witness = createWitness({ key: w, store: new MemoryWitnessStore() });
      await witness.trustLogKey(key.verifierKey);
      const r = await witness.addCheckpoint(formatConsistencyProof({ oldSize: 0, proof: [], signedCheckpoint: sealed.signedCheckpoint }));
      if (!r.ok) throw new Error(r.message);
      cosigned.push(r.lines);
    }
    const lines: Uint8Array[] = [];
    for await (const l of desk.engine.exportEntries(desk.sid)) lines.push(l);
    const dir = mkdtempSync(join(tmpdir(), 'tally-x402-witnessed-'));
    writeFileSync(join(dir, 'bundle.jsonl'), encodeBundle(lines));
    writeFileSync(join(dir, 'both.cp'), addSignatureLines(sealed.signedCheckpoint, cosigned));
    writeFileSync(join(dir, 'one.cp'), addSignatureLines(sealed.signedCheckpoint, [cosigned[0]!]));
    for (const cp of ['both', 'one']) {
      const w = tally(['evidence', 'bundle.jsonl', '--checkpoint', `${cp}.cp`, '--vkey', key.verifierKey, '--payment', '1', '--out', `${cp}.json`], { cwd: dir });
      expect(w.code, w.stderr).toBe(0);
    }
    const W = ['--witness', ws[0]!.verifierKey, '--witness', ws[1]!.verifierKey];
    const ok = tally(['verify-evidence', 'both.json', '--vkey', key.verifierKey, ...W], { cwd: dir });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('cosigned by  w1.example, w2.example (witness quorum met)');
    const bad = tally(['verify-evidence', 'one.json', '--vkey', key.verifierKey, ...W], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('invalid: the pack checkpoint: witnesses: below-quorum');
    expect(bad.stderr).toContain('not cosigned by w2.example');
    const json = tally(['verify-evidence', 'one.json', '--vkey', key.verifierKey, ...W, '--json'], { cwd: dir });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, code: 'below-quorum', stage: 'witnesses' });
    expect(tally(['verify-evidence', 'one.json', '--vkey', key.verifierKey, ...W, '--quorum', '1'], { cwd: dir }).code).toBe(0);
    // Without a policy the cosignatures are ignored; a witness key that is not a key is a usage error.
    expect(tally(['verify-evidence', 'one.json', '--vkey', key.verifierKey], { cwd: dir }).code).toBe(0);
    expect(tally(['verify-evidence', 'one.json', '--vkey', key.verifierKey, '--witness', 'nonsense'], { cwd: dir }).code).toBe(2);
  }, 120_000);
});
