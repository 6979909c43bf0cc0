/**
 * `tally demo --ap2` through the built CLI: a day under an AP2 open payment
 * mandate on a real SQLite store. The purchases within the budget are
 * admitted, the one that would exceed it is refused (and burns nothing: the
 * next, which fits exactly, is admitted), the evidence of one transaction is
 * written and verifies offline — by Tally's checker and by the independent
 * RFC 9901 verifier of the tests — and a mutated pack does not. The day is
 * deterministic: the same receipt root in another directory, and a re-run into
 * the same one reuses the sealed day. The printed next commands run.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkAp2Evidence, type Ap2Evidence } from '../../src/mandates/index.js';
import { independentVerify } from '../mandates/rfc9901.js';
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

/** The receipt root of the AP2 demo day: deterministic keys, RFC 6979 signatures, counted salts. */
const ROOT = 'c9a29e7b0fb555d22c5df18cb6088335753838811a3ca2d33b4a294767bfe29b';

function evidenceFile(path: string): Ap2Evidence {
  const v = JSON.parse(readFileSync(path, 'utf8')) as Record<string, string | number>;
  const u = (k: string) => new Uint8Array(Buffer.from(String(v[k]), 'base64'));
  return { transactionId: String(v['transaction_id']), sessionId: String(v['session']), index: Number(v['index']), genesis: u('genesis'), frame: u('frame'), turn: u('turn') };
}
const entry = (b: Uint8Array) => JSON.parse(Buffer.from(b).toString('utf8')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

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

  it('writes an evidence pack that verifies offline, and a mutated one that does not', async () => {
    const e = evidenceFile(join(dir, r.files['evidence']!));
    expect(e.transactionId).toBe(r.purchases[1]!.transactionId);
    const ok = await checkAp2Evidence(e);
    expect(ok.ok && ok.value).toMatchObject({ admitted: true, amount: 4_250, currency: 'USD' });

    // The independent RFC 9901 verifier agrees on the open mandate (user's key) and the closed one (agent's key in cnf).
    const g = entry(e.genesis), t = entry(e.turn);
    const ap2 = g['spec']['ap2'] as { mandate: string; issuer: Record<string, string> };
    const open = independentVerify(ap2.mandate, ap2.issuer);
    expect(open).toMatchObject({ signature: true, disclosuresReferenced: true });
    const body = JSON.parse(Buffer.from(t['body']['bytes'], 'base64').toString('utf8')) as { payment: string };
    const cnf = (JSON.parse(Buffer.from(ap2.mandate.split('.')[1]!, 'base64url').toString('utf8')) as { cnf: { jwk: Record<string, string> } }).cnf.jwk;
    expect(independentVerify(body.payment, ap2.issuer, cnf)).toMatchObject({ signature: true, disclosuresReferenced: true, kbSignature: true, sdHash: true });

    // Mutations: another transaction id; a turn in the frame's place; a genesis that is not the session's.
    expect(await checkAp2Evidence({ ...e, transactionId: r.purchases[0]!.transactionId })).toMatchObject({ ok: false, code: 'closed-transaction-id' });
    expect(await checkAp2Evidence({ ...e, frame: e.turn })).toMatchObject({ ok: false });
    const renamed = new TextEncoder().encode(Buffer.from(e.genesis).toString('utf8').replace('"tally-demo ap2"', '"tally-demo ap3"'));
    expect(renamed).not.toEqual(e.genesis);
    expect(await checkAp2Evidence({ ...e, genesis: renamed })).toMatchObject({ ok: false, message: 'evidence: the genesis does not hash to the session id' });
    // Bytes that are not JSON at all are refused as a result, never thrown.
    const cut = e.turn.slice(0, e.turn.length - 7);
    expect(await checkAp2Evidence({ ...e, turn: cut })).toMatchObject({ ok: false });
    expect(await checkAp2Evidence({ ...e, genesis: cut })).toMatchObject({ ok: false });
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
    expect(next.map((n) => n[0])).toEqual(['verify', 'replay', 'verify-proof']);
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
