/**
 * Judges on payment turns (issue #30, docs/PROTOCOL.md §17.10): a payment policy that names
 * judges (one, or a panel in quorum) puts every payment the mechanical checks admit to them
 * before money moves; every judge's signed answer is recorded as the trading referee records it;
 * replay re-verifies the answers without asking and diverges at a tampered one; an evidence pack
 * proves the answers and refuses a referee that lied about them.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CanonicalObject, Entry, TurnEntry } from '../../src/protocol/index.js';
import { buildPaymentEvidence, parsePaymentPolicy, verifyPaymentEvidence, type PaymentsRuler, type PaymentVerdict } from '../../src/payments/index.js';
import { createLocalJudge, createOpenAiJudge, LOCAL_JUDGE_MODEL, type Judge, type PanelAnswer } from '../../src/referee/index.js';
import { createJudgeService, VERDICT_SIGNATURE_HEADER } from '../../src/referee/judge-service.js';
import { createNotary, generateEngineKey } from '../../src/receipt/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { PayDesk, paySpec, policy, requirement, signPayment } from './fixtures.js';
import { entriesOf, replayPayments } from './replay.js';

const KEYS = [1, 2, 3].map((i) => `0x${String(i).padStart(2, '0').repeat(32)}` as `0x${string}`);
const ADDRS = KEYS.map((k) => privateKeyToAccount(k).address.toLowerCase());
const SERVICE_KEY = `0x${'07'.repeat(32)}` as const;
const SERVICE = privateKeyToAccount(SERVICE_KEY).address.toLowerCase();
const RULES = ['Pay size at most 15000 per request.'];

const panelPolicy = (k: number) => ({ ...policy(), rules: RULES, panel: { judges: ADDRS.map((signer, i) => ({ signer, model: `judge-${i}` })), quorum: k } }) as CanonicalObject;
const singlePolicy = () => ({ ...policy(), rules: RULES, judges: [SERVICE] }) as CanonicalObject;

type Kind = 'rules' | 'allow' | 'deny' | 'late';
/** Panel member `i`, answering through the real local judge's signing path. */
function member(i: number, kind: Kind): Judge {
  const model = `judge-${i}`;
  if (kind === 'late') return { model, signer: ADDRS[i]!, ask: () => new Promise(() => undefined) };
  if (kind === 'rules') return createLocalJudge({ key: KEYS[i]!, model });
  const verdict = kind === 'allow' ? 'ALLOW' : 'DENY';
  return createLocalJudge({ key: KEYS[i]!, model, script: (q) => JSON.stringify({ reason: `judge ${i} says ${verdict}`, verdict, action: q.request.action }) });
}

const paymentTurn = (entries: readonly Entry[], ticketOrCode: number | string) =>
  entries.findIndex((e) => {
    const p = e.kind === 'turn' ? ((e.ruling as { x402?: { payment?: { ticket?: number; code?: string } } } | undefined)?.x402?.payment) : undefined;
    return p !== undefined && (p.ticket === ticketOrCode || p.code === ticketOrCode);
  });
const verdictOf = (e: Entry): PaymentVerdict => ((e as TurnEntry).ruling as unknown as { x402: { payment: { verdict: PaymentVerdict } } }).x402.payment.verdict;

describe('judges on payment turns', () => {
  let server: Server;
  let baseUrl = '';
  beforeAll(async () => {
    server = createJudgeService({ key: SERVICE_KEY, model: { kind: 'local' } });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const served = (): Judge => createOpenAiJudge({ baseUrl, model: LOCAL_JUDGE_MODEL, signature: { header: VERDICT_SIGNATURE_HEADER }, timeoutMs: 10_000 });

  it('spec.payments names its judges as a mandate does: judges or a panel with a quorum, checked at open', () => {
    const spec = (p: CanonicalObject) => paySpec('judged-policy', p);
    const ok = parsePaymentPolicy(spec(panelPolicy(2)));
    expect(ok.ok && ok.policy?.judging?.panel).toMatchObject({ quorum: 2, members: [{ signer: ADDRS[0] }, { signer: ADDRS[1] }, { signer: ADDRS[2] }], shape: 'verdict' });
    expect(parsePaymentPolicy(spec(panelPolicy(4)))).toMatchObject({ ok: false, problem: expect.stringContaining('spec.payments.panel.quorum must be an integer from 1 to 3') });
    expect(parsePaymentPolicy(spec({ ...panelPolicy(2), judges: [ADDRS[0]!] }))).toMatchObject({ ok: false, problem: expect.stringContaining('exclusive') });
    expect(parsePaymentPolicy(spec({ ...policy(), judges: [ADDRS[0]!] }))).toMatchObject({ ok: false, problem: expect.stringContaining('spec.payments.rules is required') });
    expect(parsePaymentPolicy(spec({ ...policy(), rules: RULES }))).toMatchObject({ ok: false, problem: expect.stringContaining('spec.payments.judges or spec.payments.panel is required') });
    expect(parsePaymentPolicy(spec({ ...policy(), rules: RULES, judges: [SERVICE], judge_rate: { max: 1, window_ms: 60_000 } }))).toMatchObject({ ok: false, problem: expect.stringContaining('unknown member "judge_rate"') });
  });

  it('one judge served over HTTP (tally judge serve): asked before money moves, its signed answer recorded; a DENY is a typed refusal that reserves nothing; replay re-derives both and diverges at a tampered answer', async () => {
    const desk = await PayDesk.open(paySpec('judged-single', singlePolicy()), new MemoryStore(), { judge: served() });
    const ok = await desk.pay(await signPayment({ seq: 1 }));
    expect(ok.x402.payment).toMatchObject({ admitted: true, ticket: 1, verdict: { source: 'judged', admitted: true, model: LOCAL_JUDGE_MODEL, signer: SERVICE, decision: 'ALLOW', format: 'verdict' } });
    const big = await signPayment({ seq: 2, accepted: requirement({ amount: '20000' }) });
    const no = await desk.pay(big);
    expect(no.x402.payment).toMatchObject({ admitted: false, code: 'judge_denied', verdict: { admitted: false, code: 'judge_denied', signer: SERVICE, decision: 'DENY' } });
    expect(no.x402.budgets).toEqual([expect.objectContaining({ locked: '10000' })]);
    // Refused by its judge, the authorization reserved nothing: sent again, it is judged again (not duplicate_execution).
    expect((await desk.pay(big)).x402.payment).toMatchObject({ admitted: false, code: 'judge_denied' });
    const entries = await entriesOf(desk.engine, desk.sid);
    expect(await replayPayments(entries)).toEqual({ ok: true });
    const i = paymentTurn(entries, 1);
    const v = verdictOf(entries[i]!);
    const forged = entries.map((e, k) => (k === i ? ({ ...e, ruling: { ...(e as TurnEntry).ruling, x402: { ...((e as TurnEntry).ruling as { x402: object }).x402, payment: { ...((e as TurnEntry).ruling as { x402: { payment: object } }).x402.payment, verdict: { ...v, signature: `0x${'11'.repeat(65)}` } } } } } as unknown as Entry) : e));
    const r = await replayPayments(forged);
    expect(r).toMatchObject({ ok: false, index: i, produced: { ruling: { x402: { payment: { admitted: false, code: 'judge_untrusted_signer' } } } } });
  });

  it('a panel in quorum: every answer recorded in the policy order; a late judge counts as DENY and a quorum not met is a typed refusal; 2 of 3 ALLOW admit', async () => {
    const split = await PayDesk.open(paySpec('judged-panel-split', panelPolicy(2)), new MemoryStore(), { panel: [member(0, 'allow'), member(1, 'deny'), member(2, 'late')], judgeTimeoutMs: 300 });
    const refused = await split.pay(await signPayment({ seq: 1 }));
    expect(refused.x402.payment).toMatchObject({ admitted: false, code: 'judge_quorum_not_met', verdict: { quorum: { k: 2, n: 3, allow: 1 } } });
    const panel = (refused.x402.payment as { verdict: PaymentVerdict }).verdict.panel!;
    expect(panel.map((a) => [a.judge, a.admitted, a.code, a.failure])).toEqual([
      [ADDRS[0], true, undefined, undefined],
      [ADDRS[1], false, 'judge_denied', undefined],
      [ADDRS[2], false, 'judge_unavailable', 'timeout'],
    ]);
    expect(await replayPayments(await entriesOf(split.engine, split.sid))).toEqual({ ok: true });

    const quorum = await PayDesk.open(paySpec('judged-panel-quorum', panelPolicy(2)), new MemoryStore(), { panel: [member(0, 'rules'), member(1, 'deny'), member(2, 'rules')] });
    const admitted = await quorum.pay(await signPayment({ seq: 1 }));
    expect(admitted.x402.payment).toMatchObject({ admitted: true, ticket: 1, state: 'RESERVED', verdict: { admitted: true, quorum: { k: 2, n: 3, allow: 2 } } });
    const entries = await entriesOf(quorum.engine, quorum.sid);
    expect(await replayPayments(entries)).toEqual({ ok: true });
    // A removed answer: replay re-verifies, never asks, and refuses the record as evidence of this payment.
    const i = paymentTurn(entries, 1);
    const v = verdictOf(entries[i]!);
    const cut = entries.map((e, k) => (k === i ? (JSON.parse(JSON.stringify(e).replace(JSON.stringify(v), JSON.stringify({ ...v, panel: v.panel!.slice(0, 2) }))) as Entry) : e));
    expect(await replayPayments(cut)).toMatchObject({ ok: false, index: i, produced: { ruling: { x402: { payment: { code: 'judge_evidence_invalid' } } } } });
  });

  it('no judge configured for a policy that names one: judge_unavailable (no_judge), never an admission', async () => {
    const desk = await PayDesk.open(paySpec('judged-none', singlePolicy()));
    const r = await desk.pay(await signPayment({ seq: 1 }));
    expect(r.x402.payment).toMatchObject({ admitted: false, code: 'judge_unavailable', verdict: { failure: 'no_judge' } });
  });

  it('an evidence pack carries every judge answer and is re-verified; a referee that lied about an answer or reused another payment\'s is refused judge_evidence_invalid', async () => {
    const key = generateEngineKey('tally.example/x402-judges');
    const notary = createNotary({ key });
    const verifiers = [key.verifierKey];
    const clients = { panel: [member(0, 'rules'), member(1, 'deny'), member(2, 'rules')] };
    const pack = async (desk: PayDesk, ticket: number) => {
      const sealed = await notary.sealWithReceipt(desk.engine, desk.sid);
      if (!sealed.ok) throw new Error('seal');
      const b = await buildPaymentEvidence({ engine: desk.engine, notary, sessionId: desk.sid, select: { ticket }, signedCheckpoint: sealed.signedCheckpoint });
      if (!b.ok) throw new Error(b.message);
      return JSON.parse(JSON.stringify(b.pack)) as unknown;
    };

    const honest = await PayDesk.open(paySpec('judged-pack', panelPolicy(2)), new MemoryStore(), clients);
    await honest.pay(await signPayment({ seq: 1 }));
    const v = await verifyPaymentEvidence(await pack(honest, 1), { verifiers });
    expect(v).toMatchObject({ ok: true, rederived: true, payment: { admitted: true, verdict: { quorum: { k: 2, n: 3, allow: 2 } } } });
    expect(v.ok && v.payment.verdict?.panel?.map((a) => a.signer)).toEqual(ADDRS);

    // The lie: the dissenting judge's answer recorded as an ALLOW (the vote inflated to 3 of 3).
    const inflate = (r: PaymentsRuler): PaymentsRuler => ({
      ...r,
      async rule(ctx) {
        const o = await r.rule(ctx);
        const p = (o?.ruling as { x402?: { payment?: { verdict?: PaymentVerdict } } } | undefined)?.x402?.payment;
        if (o && p?.verdict?.panel) {
          p.verdict = { ...p.verdict, quorum: { ...p.verdict.quorum!, allow: 3 }, panel: p.verdict.panel.map((a) => JSON.parse(JSON.stringify({ ...a, admitted: true, decision: 'ALLOW', code: undefined })) as PanelAnswer) };
        }
        return o;
      },
    });
    const liar = await PayDesk.open(paySpec('judged-liar', panelPolicy(2)), new MemoryStore(), clients, inflate);
    await liar.pay(await signPayment({ seq: 1 }));
    expect(await verifyPaymentEvidence(await pack(liar, 1), { verifiers })).toMatchObject({ ok: false, code: 'judge_evidence_invalid' });

    // The other lie: payment 2 recorded with the verdict payment 1 got (answers bound to another payment's request).
    let first: PaymentVerdict | undefined;
    const reuse = (r: PaymentsRuler): PaymentsRuler => ({
      ...r,
      async rule(ctx) {
        const o = await r.rule(ctx);
        const p = (o?.ruling as { x402?: { payment?: { verdict?: PaymentVerdict } } } | undefined)?.x402?.payment;
        if (p?.verdict) {
          if (first === undefined) first = p.verdict;
          else p.verdict = first;
        }
        return o;
      },
    });
    const replayer = await PayDesk.open(paySpec('judged-reuse', panelPolicy(2)), new MemoryStore(), clients, reuse);
    await replayer.pay(await signPayment({ seq: 1 }));
    await replayer.pay(await signPayment({ seq: 2 }));
    expect(await verifyPaymentEvidence(await pack(replayer, 2), { verifiers })).toMatchObject({ ok: false, code: 'judge_evidence_invalid', message: expect.stringContaining('answers another request') });
    expect(await verifyPaymentEvidence(await pack(replayer, 1), { verifiers })).toMatchObject({ ok: true });
  });
});
