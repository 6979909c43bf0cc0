/**
 * Several OS processes on one PostgreSQL schema spend one AP2 open mandate's
 * budget at once, each from its own session: the budget is never exceeded,
 * exactly as many purchases are admitted as fit (each a distinct use number
 * 0..k-1), and every refusal names the budget. The store's atomic
 * reservation of (ap2:<mandate>, use:<n>) with the spending turn is what
 * makes this hold across processes; OS timing decides the interleaving.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, dropSchema, freshSchemaName, pgReady, warnIfSkipped } from '../store/helpers/pg.js';
import { requireFreshDist } from '../store/helpers/procs.js';
import { ap2Spec, openPaymentMandate, paymentTurn, receiptJwt, turnParts, world } from './fixtures.js';

warnIfSkipped('mandates/race.process.test.ts');
const WORKER = resolve(import.meta.dirname, 'workers/spender.mjs');
const schemas: string[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of schemas) await dropSchema(s);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Ruling { admitted?: boolean; use?: number; amount?: number; code?: string; violations?: string[]; ready?: boolean; done?: boolean }

function spender(cfg: object): Promise<{ go: () => void; rulings: Promise<Ruling[]> }> {
  const p = spawn(process.execPath, [WORKER, JSON.stringify(cfg)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  p.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const rulings: Ruling[] = [];
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  const done = new Promise<Ruling[]>((res, rej) => {
    createInterface({ input: p.stdout }).on('line', (l) => {
      const o = JSON.parse(l) as Ruling;
      if (o.ready) ready();
      else if (o.done) res(rulings);
      else rulings.push(o);
    });
    p.once('exit', (code) => (code === 0 ? undefined : rej(new Error(`spender exited ${code}: ${err}`))));
  });
  return Promise.race([isReady.then(() => ({ go: () => p.stdin.end('go\n'), rulings: done })), done.then(() => { throw new Error(`spender finished before go: ${err}`); })]);
}

async function race(location: string): Promise<void> {
  const T = 1_893_456_000; // 2030-01-01T00:00:00Z
    const w = await world();
    const BUDGET = 100; // USD: 10000 minor units
    const PRICE = 1_500; // 6 fit (9000), a 7th would make 10500
    const PROCS = 4;
    const EACH = 4;
    const mandate = await openPaymentMandate(w, { iat: T - 60, exp: T + 86_400, budget: { currency: 'USD', max: BUDGET } });
    const ap2 = ap2Spec(w, mandate);
    const dec = new TextDecoder();
    const all16: Uint8Array[][] = [];
    for (let p = 0; p < PROCS; p++) {
      const bodies: Uint8Array[] = [];
      for (let i = 0; i < EACH; i++) bodies.push(await paymentTurn(w, mandate, { amount: PRICE, nonce: `p${p}-${i}`, iat: T }));
      all16.push(bodies);
    }
    // The credential provider answers every presentation (AP2: none without a receipt for the previous one);
    // each spender's first frame carries all the receipts, so the rule never stands between a purchase and the budget.
    const receipts: { type: string; jwt: string }[] = [];
    for (const body of all16.flat()) receipts.push({ type: 'payment', jwt: await receiptJwt(w, 'payment', turnParts(body).reference) });
    const cfgs = all16.map((bodies, p) => ({ location, name: `desk-${p}`, ap2, bodies: bodies.map((x) => dec.decode(x)), time: T * 1000, data: { ap2: { receipts } } }));
    // Sessions are opened one after another (schema migration on first open), then all spend at once.
    const workers = [];
    for (const c of cfgs) workers.push(await spender(c));
    for (const x of workers) x.go();
    const all = (await Promise.all(workers.map((x) => x.rulings))).flat();
    expect(all).toHaveLength(PROCS * EACH);
    const admitted = all.filter((r) => r.admitted === true);
    const fit = Math.floor((BUDGET * 100) / PRICE);
    expect(admitted).toHaveLength(fit);
    expect(admitted.map((r) => r.use).sort((a, b) => a! - b!)).toEqual(Array.from({ length: fit }, (_, i) => i));
    expect(admitted.reduce((s, r) => s + r.amount!, 0)).toBeLessThanOrEqual(BUDGET * 100);
    for (const r of all.filter((x) => x.admitted !== true)) expect(r).toMatchObject({ code: 'constraint-violated', violations: ['payment.budget'] });
}

describe('AP2 budget race across processes', () => {
  it.skipIf(!pgReady)('on one PostgreSQL schema: never over the budget, exactly the purchases that fit admitted', async () => {
    requireFreshDist();
    const schema = freshSchemaName('ap2race');
    schemas.push(schema);
    await race(`${PG_URL!}${PG_URL!.includes('?') ? '&' : '?'}schema=${schema}`);
  }, 120_000);

  it('on one SQLite file: the same', async () => {
    requireFreshDist();
    const dir = mkdtempSync(join(tmpdir(), 'tally-ap2-race-'));
    dirs.push(dir);
    await race(`sqlite:${join(dir, 'race.db')}`);
  }, 120_000);
});
