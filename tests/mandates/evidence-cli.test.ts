/**
 * `tally evidence --transaction` and `tally verify-evidence` on a sealed AP2
 * day (real engine, SQLite store, jose and @sd-jwt/* credentials): the pack
 * holds the open mandate, the purchase and the receipts about it, each under
 * the day's sealed checkpoint; verify-evidence runs AP2's five dispute steps
 * offline and names each outcome. Edited packs (an entry changed, dropped or
 * relabelled, another transaction id), missing receipts and another verifier
 * key are refused with their codes.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { createAp2Ruler, runDisputeSteps } from '../../src/mandates/index.js';
import { createNotary, generateEngineKey } from '../../src/receipt/index.js';
import { openStore } from '../../src/store/index.js';
import { inProcess } from '../cli/in-process.js';
import { ap2Spec, openPaymentMandate, paymentTurn, receiptJwt, turnParts, world } from './fixtures.js';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const T0 = 1_893_456_000_000; // 2030-01-01T00:00:00Z, ms

interface Verdict { ok: boolean; code?: string; complete?: boolean; steps?: { step: number; name: string; outcome: string; code?: string }[] }

describe('tally evidence --transaction / verify-evidence (AP2)', () => {
  it('writes a pack with inclusion proofs and runs the five dispute steps offline', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-ap2-evidence-'));
    dirs.push(dir);
    const store = await openStore(`sqlite:${join(dir, 'ap2.db')}`);
    const engine = createEngine({ store, ruler: createAp2Ruler({ store }) });
    const w = await world();
    const mandate = await openPaymentMandate(w, { iat: T0 / 1000 - 60, exp: T0 / 1000 + 86_400, budget: { currency: 'USD', max: 100 } });
    const o = await engine.open({ name: 'desk', ap2: ap2Spec(w, mandate) } as never);
    if (!o.ok) throw new Error(o.message);
    let ordinal = -1;
    const step = async (body: Uint8Array, time: number, data?: unknown) => {
      const f = await engine.frame({ sessionId: o.sessionId, ordinal, time, ...(data === undefined ? {} : { data }) });
      if (!f.ok) throw new Error(f.message);
      ordinal++;
      const t = await engine.turn({ sessionId: o.sessionId, ordinal: f.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: body } });
      if (!t.ok) throw new Error(t.message);
      return (t.ruling as { ap2: Record<string, unknown> }).ap2;
    };
    const one = await paymentTurn(w, mandate, { amount: 2_500, nonce: 'e1', iat: T0 / 1000 });
    const two = await paymentTurn(w, mandate, { amount: 1_000, nonce: 'e2', iat: T0 / 1000, sku: 'sku-2' });
    const p1 = turnParts(one), p2 = turnParts(two);
    expect(await step(one, T0)).toMatchObject({ admitted: true, use: 0 });
    // The merchant's checkout receipt and the provider's payment receipt for purchase 1 arrive with the next frame.
    const receipts = [{ type: 'checkout', jwt: await receiptJwt(w, 'checkout', p1.transactionId) }, { type: 'payment', jwt: await receiptJwt(w, 'payment', p1.reference) }];
    expect(await step(two, T0 + 1000, { ap2: { receipts } })).toMatchObject({ admitted: true, use: 1, previous_receipt: { reference: p1.reference, in_frame: true } });
    const key = generateEngineKey('tally.example/ap2');
    const sealed = await createNotary({ key }).sealWithReceipt(engine, o.sessionId);
    if (!sealed.ok) throw new Error('seal');
    const lines: Uint8Array[] = [];
    for await (const l of engine.exportEntries(o.sessionId)) lines.push(l);
    await store.close();
    writeFileSync(join(dir, 'day.jsonl'), encodeBundle(lines));
    writeFileSync(join(dir, 'day.note'), sealed.signedCheckpoint);
    const base = ['day.jsonl', '--checkpoint', 'day.note', '--vkey', key.verifierKey];
    const run = (args: string[]) => inProcess(args, { cwd: dir });

    const w1 = await run(['evidence', ...base, '--transaction', p1.transactionId, '--out', 'tx1.json']);
    expect(w1.code, w1.stderr).toBe(0);
    expect(w1.stdout).toMatch(new RegExp(`evidence for transaction ${p1.transactionId} \\(4 receipts, session [0-9a-f]{64}\\) written to`));
    const v1 = await run(['verify-evidence', 'tx1.json', '--vkey', key.verifierKey]);
    expect(v1.code, v1.stderr).toBe(0);
    for (const s of ['step 1 checkout-mandate: pass', 'step 2 checkout-hash: pass', 'step 3 checkout-receipt: pass', 'step 4 payment-mandate: pass', 'step 5 payment-receipt: pass']) expect(v1.stdout).toContain(s);
    expect(v1.stdout).toContain('ruled admitted, 2500 USD minor units');
    expect(v1.stdout).toMatch(/valid: all five dispute steps pass$/m);
    const j1 = JSON.parse((await run(['verify-evidence', 'tx1.json', '--vkey', key.verifierKey, '--json'])).stdout) as Verdict;
    expect(j1).toMatchObject({ ok: true, complete: true });
    expect(j1.steps!.map((s) => [s.step, s.name, s.outcome])).toEqual([[1, 'checkout-mandate', 'pass'], [2, 'checkout-hash', 'pass'], [3, 'checkout-receipt', 'pass'], [4, 'payment-mandate', 'pass'], [5, 'payment-receipt', 'pass']]);

    // Purchase 2 has no receipts yet: steps 3 and 5 are missing, the pack is not complete evidence.
    expect((await run(['evidence', ...base, '--transaction', p2.transactionId, '--out', 'tx2.json'])).code).toBe(0);
    const v2 = await run(['verify-evidence', 'tx2.json', '--vkey', key.verifierKey, '--json']);
    expect(v2.code).toBe(1);
    expect(v2.stderr).toContain('invalid: step 3 checkout-receipt: receipt-missing');
    expect((JSON.parse(v2.stdout) as Verdict).steps!.map((s) => s.outcome)).toEqual(['pass', 'pass', 'missing', 'pass', 'missing']);

    // Mutations of the good pack.
    const pack = JSON.parse(readFileSync(join(dir, 'tx1.json'), 'utf8')) as { transaction_id: string; entries: { role: string; receipt: string }[] };
    const verdict = async (p: unknown, vkey = key.verifierKey) => {
      writeFileSync(join(dir, 'm.json'), JSON.stringify(p));
      const r = await run(['verify-evidence', 'm.json', '--vkey', vkey, '--json']);
      return { code: r.code, v: JSON.parse(r.stdout) as Verdict };
    };
    // the receipt frame dropped: steps 3 and 5 missing
    expect((await verdict({ ...pack, entries: pack.entries.filter((e) => e.role !== 'receipt-frame') })).v.steps!.map((s) => s.outcome)).toEqual(['pass', 'pass', 'missing', 'pass', 'missing']);
    // another transaction id than the purchase's
    expect(await verdict({ ...pack, transaction_id: p2.transactionId })).toMatchObject({ code: 1, v: { ok: false, code: 'evidence-malformed' } });
    // one character of the purchase's receipt (entry bytes or proof) changed
    const flipAt = (t: string) => { let k = Math.floor(t.length / 2); while (!/[A-Za-z]/.test(t[k]!)) k++; return t.slice(0, k) + (t[k] === 'A' ? 'B' : 'A') + t.slice(k + 1); };
    const flip = pack.entries.map((e) => (e.role === 'purchase' ? { ...e, receipt: flipAt(e.receipt) } : e));
    expect(await verdict({ ...pack, entries: flip })).toMatchObject({ code: 1, v: { ok: false, code: 'evidence-inclusion' } });
    // the purchase's frame swapped for the receipt frame
    const swapped = pack.entries.map((e) => (e.role === 'purchase-frame' ? { ...e, role: 'receipt-frame' } : e.role === 'receipt-frame' ? { ...e, role: 'purchase-frame' } : e));
    expect(await verdict({ ...pack, entries: swapped })).toMatchObject({ code: 1, v: { ok: false, code: 'evidence-malformed' } });
    // another engine key
    expect(await verdict(pack, generateEngineKey('tally.example/ap2').verifierKey)).toMatchObject({ code: 1, v: { ok: false, code: 'evidence-inclusion' } });

    // The steps themselves, on receipts that answer another presentation or come from the wrong party.
    const body = JSON.parse(new TextDecoder().decode(one)) as { checkout_jwt: string; open_checkout: string; payment: string };
    const d = await runDisputeSteps({
      spec: { name: 'desk', ap2: ap2Spec(w, mandate) } as never, frameTime: T0, transactionId: p1.transactionId,
      purchase: { checkoutJwt: body.checkout_jwt, openCheckout: body.open_checkout, payment: body.payment },
      receipts: [{ type: 'payment', jwt: await receiptJwt(w, 'payment', p2.reference) }, { type: 'checkout', jwt: await receiptJwt(w, 'checkout', p1.transactionId, { by: w.provider }) }],
    });
    expect(d.steps.map((x) => x.code ?? x.outcome)).toEqual(['pass', 'pass', 'receipt-issuer', 'pass', 'receipt-reference']);

    // Usage: an unknown transaction, a malformed id, both selectors.
    expect((await run(['evidence', ...base, '--transaction', 'A'.repeat(43)])).code).toBe(1);
    expect((await run(['evidence', ...base, '--transaction', 'short'])).code).toBe(2);
    expect((await run(['evidence', ...base, '--transaction', p1.transactionId, '--payment', '1'])).code).toBe(2);
  }, 120_000);
});
