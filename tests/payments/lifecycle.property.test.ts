/**
 * The settlement lifecycle against a model (fast-check): payments admitted, settled, failed,
 * timed out (UNKNOWN), reconciled from chain evidence (good and forged receipts), lapsed (early
 * and late) and retried, in any order — including a settlement that lands after UNKNOWN was
 * recorded. Every outcome, every ticket state and the budget figures after each wake must equal
 * the model's; then the whole day replays byte for byte.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PaymentState, SettlementOutcome } from '../../src/payments/index.js';
import type { CanonicalObject, CanonicalValue } from '../../src/protocol/index.js';
import { ASSET, NETWORK, PayDesk, paySpec, policy, receiptOf, secs, signPayment } from './fixtures.js';
import { entriesOf, replayPayments } from './replay.js';

type Cmd =
  | { op: 'pay' }
  | { op: 'retry'; t: number }
  | { op: 'settle' | 'fail' | 'unknown' | 'receipt' | 'forged' | 'lapse'; t: number; late?: boolean };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ op: 'pay' as const }) },
  { weight: 1, arbitrary: fc.nat(6).map((t) => ({ op: 'retry' as const, t })) },
  { weight: 5, arbitrary: fc.record({ op: fc.constantFrom('settle', 'fail', 'unknown', 'receipt', 'forged', 'lapse'), t: fc.nat(6), late: fc.boolean() }) as fc.Arbitrary<Cmd> },
);

/** Every payment is the fixture requirement's 10000 atomic units. */
const VALUE = 10000n;
const BUDGET = 1_000_000n;
const open = (s: PaymentState) => s === 'RESERVED' || s === 'UNKNOWN';

describe('payment settlement lifecycle (seed 0x30402)', () => {
  it('outcomes, states and budgets follow the model; the day replays', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { minLength: 1, maxLength: 14 }), async (cmds) => {
        const desk = await PayDesk.open(paySpec(`lifecycle-${run++}`, policy({ budget: BUDGET.toString() })));
        const model: { state: PaymentState; payload: CanonicalObject; validBefore: bigint }[] = [];
        let now = 1_893_456_000_000;
        let seq = 1;
        for (const c of cmds) {
          now += 60_000;
          if (c.op === 'pay' || c.op === 'retry') {
            const payload = await signPayment({ seq: seq++ }, now);
            const auth = (payload['payload'] as { authorization: { validBefore: string } }).authorization;
            const first = c.op === 'retry' ? model[c.t % Math.max(1, model.length)] : undefined;
            const retryOf = c.op !== 'retry' ? undefined : first ? (c.t % model.length) + 1 : model.length + 1;
            const t = await desk.pay(payload, { time: now, ...(retryOf === undefined ? {} : { retryOf }) });
            const expected = first === undefined ? 'admitted' : first.state === 'FAILED' ? 'admitted' : open(first.state) ? 'settlement_unknown' : 'retry_not_allowed';
            const p = t.x402.payment!;
            if (c.op === 'retry' && !first) {
              // No ticket yet to retry: the retry names one that does not exist.
              expect(p).toMatchObject({ admitted: false, code: 'retry_not_allowed' });
              continue;
            }
            expect(p.admitted ? 'admitted' : p.code).toBe(expected);
            if (p.admitted) model.push({ state: 'RESERVED', payload, validBefore: BigInt(auth.validBefore) });
          } else {
            const i = c.t % Math.max(1, model.length);
            const m = model[i];
            const id = i + 1;
            if (c.op === 'lapse' && c.late && m) now = Math.max(now, Number(m.validBefore) * 1000);
            const fact: CanonicalValue =
              c.op === 'settle' ? { ticket: id, response: { success: true, transaction: `0x${id.toString(16).padStart(64, 'c')}`, network: NETWORK } }
              : c.op === 'fail' ? { ticket: id, response: { success: false, errorReason: 'transaction_failed', transaction: '', network: NETWORK } }
              : c.op === 'unknown' ? { ticket: id, unknown: 'timeout' }
              : c.op === 'receipt' ? { ticket: id, receipt: m ? (receiptOf(m.payload) as unknown as CanonicalObject) : receiptOf(await signPayment()) as unknown as CanonicalObject }
              : c.op === 'forged' ? { ticket: id, receipt: receiptOf(m?.payload ?? (await signPayment()), undefined, { value: '1' }) as unknown as CanonicalObject }
              : { ticket: id, lapsed: { authorization_state: false } };
            const t = await desk.wake({ settlements: [fact], time: now });
            const [out] = t.x402.settlements as SettlementOutcome[];
            let want: string;
            if (!m) want = 'ticket_unknown';
            else if (!open(m.state)) want = 'ticket_not_open';
            else if (c.op === 'settle' || c.op === 'receipt') want = 'SETTLED';
            else if (c.op === 'forged') want = 'evidence_mismatch';
            else if (c.op === 'fail') want = m.state === 'UNKNOWN' ? 'settlement_unknown' : 'FAILED';
            else if (c.op === 'unknown') want = m.state === 'UNKNOWN' ? 'ticket_not_open' : 'UNKNOWN';
            else want = secs(now) >= m.validBefore ? 'FAILED' : 'evidence_insufficient';
            expect(out!.ok ? out!.state : out!.code).toBe(want);
            if (m && out!.ok) m.state = out!.state;
          }
          const used = model.filter((x) => x.state === 'SETTLED').length;
          const locked = model.filter((x) => open(x.state)).length;
          const fold = await desk.ruler.history.fold(desk.sid, (await entriesOf(desk.engine, desk.sid)).length);
          expect(fold.tickets.map((t) => t.state)).toEqual(model.map((m) => m.state));
          const spent = fold.spent.get(`${NETWORK} ${ASSET.toLowerCase()}`) ?? { used: 0n, locked: 0n };
          expect(spent).toEqual({ used: BigInt(used) * VALUE, locked: BigInt(locked) * VALUE });
        }
        expect(await replayPayments(await entriesOf(desk.engine, desk.sid))).toEqual({ ok: true });
      }),
      { seed: 0x30402, numRuns: 25 },
    );
  }, 240_000);
});
