/**
 * `tally demo --ap2` through the built CLI: a day under an AP2 open payment
 * mandate on a real SQLite store. The purchases within the budget are
 * admitted, the one that would exceed it is refused (and burns nothing: the
 * next, which fits exactly, is admitted), each admitted purchase's receipts
 * arrive in the next frame, the tally/ap2-evidence/1 pack of one transaction
 * passes AP2's five dispute steps offline — by Tally's checker, with the
 * mandates, the merchant's checkout JWT and the receipts re-checked by the
 * independent verifiers of the tests — and mutated packs do not. The day is
 * deterministic: the same receipt root in another directory, and a re-run into
 * the same one reuses the sealed day. The printed next commands run.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { b64sha256, verifyAp2Evidence } from '../../src/mandates/index.js';
import { es256, independentVerify } from '../mandates/rfc9901.js';
import { tally } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-cli-demo-ap2-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Report {
  mode: string;
  sessionId: string;
  budget: { minor: number; spent: number };
  purchases: { sku: string; amount: number; admitted: boolean; spentBefore: number; code?: string; violations?: string[]; transactionId: string }[];
  receipt: { receiptRoot: string; size: number };
  checks: Record<string, { ok: boolean; detail: string }>;
  files: Record<string, string>;
}

/**
 * The receipt root of the AP2 demo day: deterministic keys, RFC 6979 signatures, counted salts.
 * (Was c9a29e7b… before spec.ap2 pinned the merchant and provider: against that day's bundle, every
 * turn body is byte-identical; the genesis adds merchant/provider, three frames add data.ap2.receipts,
 * the rulings add reference, previous_receipt and receipts; everything else that differs is a chain hash.)
 */
const ROOT = '6d6b6706bfbc055edf5818c0e8e354baf4e7e12c0ee12e6fb3bbcac4fef8c7ea';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const bundleEntries = (path: string): Json[] => readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Json);
const payloadOf = (jws: string): Json => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8')) as Json;

describe('tally demo --ap2 (from outside)', () => {
  const first = tally(['demo', '--ap2', '--json', '--out', 'day'], { cwd: dir });
  const r = JSON.parse(first.stdout) as Report;

  it('admits the purchases within the budget and refuses the one that would exceed it', () => {
    expect(first.code, first.stderr).toBe(0);
    expect(r.mode).toBe('new');
    expect(r.purchases.map((p) => p.admitted)).toEqual([true, true, true, false, true]);
    const refused = r.purchases[3]!;
    expect(refused).toMatchObject({ code: 'constraint-violated', violations: ['payment.budget'], spentBefore: 9_550, amount: 1_200 });
    // The refusal spent nothing: the last purchase fits the budget exactly.
    expect(r.purchases[4]).toMatchObject({ admitted: true, spentBefore: 9_550, amount: 450 });
    expect(r.budget).toMatchObject({ minor: 10_000, spent: 10_000 });
    for (const [name, c] of Object.entries(r.checks)) expect(c.ok, `${name}: ${c.detail}`).toBe(true);
    expect(r.receipt.receiptRoot).toBe(ROOT);
  });

  it('delivers each admitted purchase\'s receipts in the next frame, and rules every later presentation on them', () => {
    const entries = bundleEntries(join(dir, r.files['bundle']!));
    const spec = entries[0]!['spec']['ap2'] as Json;
    const frames = entries.filter((e) => e['kind'] === 'frame');
    const turns = entries.filter((e) => e['kind'] === 'turn');
    // Receipts after purchases 0, 1, 2 (admitted); none after 3 (refused), so purchase 4 leans on purchase 2's, held in the store.
    expect(frames.map((f) => (f['data']['ap2']?.['receipts'] as unknown[] | undefined)?.length ?? 0)).toEqual([0, 2, 2, 2, 0]);
    for (const [i, f] of frames.entries()) {
      if (i === 0 || i === 4) continue;
      const before = JSON.parse(Buffer.from(turns[i - 1]!['body']['bytes'], 'base64').toString('utf8')) as { checkout_jwt: string; payment: string };
      const [checkout, payment] = f['data']['ap2']['receipts'] as { type: string; jwt: string }[];
      // Independently (node:crypto): the checkout receipt is the merchant's, the payment receipt the provider's, each about the previous purchase.
      expect(checkout!.type).toBe('checkout');
      expect(es256(checkout!.jwt, spec['merchant']['key'])).toBe(true);
      expect(es256(checkout!.jwt, spec['provider']['key'])).toBe(false);
      expect(payloadOf(checkout!.jwt)).toMatchObject({ iss: spec['merchant']['iss'], reference: r.purchases[i - 1]!.transactionId, status: 'Success' });
      expect(payment!.type).toBe('payment');
      expect(es256(payment!.jwt, spec['provider']['key'])).toBe(true);
      expect(payloadOf(payment!.jwt)).toMatchObject({ iss: spec['provider']['iss'], reference: b64sha256(before.payment), status: 'Success' });
      expect(es256(before.checkout_jwt, spec['merchant']['key'])).toBe(true);
    }
    const rulings = turns.map((t) => t['ruling']['ap2'] as Json);
    expect(rulings.map((a) => a['receipts']?.length ?? 0)).toEqual([0, 2, 2, 2, 0]);
    expect(rulings[1]!['previous_receipt']).toEqual({ reference: rulings[0]!['reference'], in_frame: true });
    // Purchase 4's previous use is purchase 2, whose receipts the store holds from turn 8 (the turn answering the frame that carried them).
    expect(rulings[4]!['previous_receipt']).toMatchObject({ reference: rulings[2]!['reference'], session: r.sessionId, index: 8 });
  });

  it('writes a tally/ap2-evidence/1 pack whose five dispute steps pass offline, and mutated packs that do not', async () => {
    const path = join(dir, r.files['evidence']!);
    const pack = JSON.parse(readFileSync(path, 'utf8')) as Json;
    expect(pack).toMatchObject({ format: 'tally/ap2-evidence/1', session: r.sessionId, transaction_id: r.purchases[1]!.transactionId });
    expect((pack['entries'] as Json[]).map((e) => e['role'])).toEqual(['genesis', 'purchase-frame', 'purchase', 'receipt-frame']);
    const vkey = readFileSync(join(dir, r.files['verifierKey']!), 'utf8').trim();
    const ok = await verifyAp2Evidence(pack, { verifiers: [vkey] });
    expect(ok).toMatchObject({ ok: true, admitted: true, amount: 4_250, currency: 'USD', complete: true });
    expect(ok.ok && ok.steps.map((x) => `${x.name} ${x.outcome}`)).toEqual(['checkout-mandate pass', 'checkout-hash pass', 'checkout-receipt pass', 'payment-mandate pass', 'payment-receipt pass']);
    const cli = tally(['verify-evidence', path, '--vkey', vkey], { cwd: dir });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('valid: all five dispute steps pass');

    // The independent RFC 9901 verifier agrees on the open mandate (user's key) and the closed one (agent's key in cnf).
    const entries = bundleEntries(join(dir, r.files['bundle']!));
    const ap2 = entries[0]!['spec']['ap2'] as { mandate: string; issuer: Record<string, string> };
    expect(independentVerify(ap2.mandate, ap2.issuer)).toMatchObject({ signature: true, disclosuresReferenced: true });
    const body = JSON.parse(Buffer.from(entries[4]!['body']['bytes'], 'base64').toString('utf8')) as { payment: string };
    const cnf = (JSON.parse(Buffer.from(ap2.mandate.split('.')[1]!, 'base64url').toString('utf8')) as { cnf: { jwk: Record<string, string> } }).cnf.jwk;
    expect(independentVerify(body.payment, ap2.issuer, cnf)).toMatchObject({ signature: true, disclosuresReferenced: true, kbSignature: true, sdHash: true });

    // Mutations: another transaction id; no receipt frame (step 3 and 5 missing); a purchase in the frame's place; a receipt cut short.
    expect(await verifyAp2Evidence({ ...pack, transaction_id: r.purchases[0]!.transactionId }, { verifiers: [vkey] })).toMatchObject({ ok: false, code: 'evidence-malformed' });
    const noReceipts = { ...pack, entries: (pack['entries'] as Json[]).filter((e) => e['role'] !== 'receipt-frame') };
    const missing = await verifyAp2Evidence(noReceipts, { verifiers: [vkey] });
    expect(missing.ok && missing.steps.map((x) => x.outcome)).toEqual(['pass', 'pass', 'missing', 'pass', 'missing']);
    expect(missing.ok && missing.complete).toBe(false);
    writeFileSync(join(dir, 'no-receipts.json'), JSON.stringify(noReceipts));
    const bad = tally(['verify-evidence', 'no-receipts.json', '--vkey', vkey], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('invalid: step 3 checkout-receipt: receipt-missing');
    const swapped = (pack['entries'] as Json[]).map((e) => (e['role'] === 'purchase-frame' ? { ...e, role: 'receipt-frame' } : e['role'] === 'receipt-frame' ? { ...e, role: 'purchase-frame' } : e));
    expect(await verifyAp2Evidence({ ...pack, entries: swapped }, { verifiers: [vkey] })).toMatchObject({ ok: false, code: 'evidence-malformed' });
    const cut = (pack['entries'] as Json[]).map((e) => (e['role'] === 'purchase' ? { ...e, receipt: String(e['receipt']).slice(0, -7) } : e));
    expect(await verifyAp2Evidence({ ...pack, entries: cut }, { verifiers: [vkey] })).toMatchObject({ ok: false, code: 'evidence-inclusion' });
  });

  it('is the same day everywhere: another directory gives the same root, a re-run reuses the sealed day', () => {
    const again = tally(['demo', '--ap2', '--json', '--out', 'day'], { cwd: dir });
    expect(again.code, again.stderr).toBe(0);
    const a = JSON.parse(again.stdout) as Report;
    expect(a.mode).toBe('reused');
    expect(a.receipt.receiptRoot).toBe(ROOT);
    expect(a.purchases.map((p) => p.admitted)).toEqual([true, true, true, false, true]);
    const elsewhere = tally(['demo', '--ap2', '--out', 'other'], { cwd: dir });
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    expect(elsewhere.stdout).toContain(`receipt root  ${ROOT}`);
    expect(elsewhere.stdout).toMatch(/purchase 3 +encyclopedia-vol-1 +USD 12\.00 +REFUSED constraint-violated \(payment\.budget\)/);
  });

  it('prints next commands that run as printed', () => {
    const text = tally(['demo', '--ap2', '--out', 'day'], { cwd: dir }).stdout;
    const next = text.split('\n').filter((l) => /^ {2}(next| ) +tally /.test(l)).map((l) => l.replace(/^ +(next +)?tally /, '').trim().split(/ +/));
    expect(next.map((n) => n[0])).toEqual(['verify', 'replay', 'verify-proof', 'verify-evidence']);
    for (const args of next) {
      const run = tally(args, { cwd: dir });
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    }
    expect(tally(next[1]!, { cwd: dir }).stdout).toContain('all 5 rulings re-derived');
    expect(existsSync(join(dir, 'day', 'evidence.tlog-proof'))).toBe(true);
  });

  it('refuses the plain demo options with --ap2 (usage error)', () => {
    const bad = tally(['demo', '--ap2', '--seed', '3'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--seed does not apply to --ap2');
  });
});
