/**
 * Model-based property: random sequences of admissions, redemptions,
 * releases, waits (expiries) and terminations, through a real engine. After
 * every step the recorded outcomes equal a simple model's, and the quota
 * invariants hold: 0 ≤ used, 0 ≤ locked, used + locked ≤ cap, and
 * used_txs + locked_txs ≤ tx_cap.
 *
 * The generators aim at the boundaries, where off-by-ones live: the quota cap
 * and tx cap are drawn (caps of 1 and of one transaction included), and half
 * the admissions are sized from the model at run time to land exactly on the
 * free quota, one step over it, or one step under it. A planted `<` for `<=`
 * at the quota cap, or `<=` for `<` at the tx cap, fails within the seed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signRedemption, signRelease, signTermination, decAdd, decCmp } from '../../src/referee/index.js';
import type { CanonicalObject } from '../../src/protocol/index.js';
import type { Intent } from '../../src/intent/index.js';
import { carry, iso, openIntent, signed, T0 } from '../rules/fixtures.js';
import { Desk, INSTANCE, KEY_EXECUTOR, KEY_OPERATOR, KEY_PRINCIPAL, mandate, refereeSpec, ruling } from './fixtures.js';

/** `fit` sizes the admission from the model: exactly the free quota, one step over, or one step under. */
type Fit = 'exact' | 'over' | 'under';

type Step =
  | { kind: 'admit'; action: 'open' | 'close'; tenths: number; ttlMin: number; fit?: Fit }
  | { kind: 'redeem'; pick: number }
  | { kind: 'release'; pick: number; by: 'principal' | 'operator' | 'anyone' }
  | { kind: 'terminate' }
  | { kind: 'wait'; minutes: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('admit' as const), action: fc.constantFrom('open' as const, 'close' as const), tenths: fc.integer({ min: 1, max: 35 }), ttlMin: fc.integer({ min: 1, max: 10 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('admit' as const), action: fc.constantFrom('open' as const, 'close' as const), tenths: fc.constant(1), ttlMin: fc.integer({ min: 1, max: 10 }), fit: fc.constantFrom('exact' as const, 'exact' as const, 'over' as const, 'under' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('redeem' as const), pick: fc.nat(20) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat(20), by: fc.constantFrom('principal' as const, 'operator' as const, 'anyone' as const) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'terminate' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('wait' as const), minutes: fc.integer({ min: 1, max: 8 }) }) },
);

/** Quota caps in hundredths (1 is "1", 50 is "0.5") and tx caps: small ones so that both are reached often. */
const limits = fc.record({ cap: fc.constantFrom(100, 50, 150, 400, 100), txCap: fc.constantFrom(1, 2, 3, 4, 6) });
const END_MIN = 20;

interface ModelTicket {
  weight: number;
  expires: number;
  state: 'ACTIVE' | 'REDEEMED' | 'RELEASED';
  intent: Intent;
  proof: string;
}

const hundredths = (n: number) => decAdd(String(Math.trunc(n / 100)), n % 100 === 0 ? '0' : `0.${String(n % 100).padStart(2, '0')}`.replace(/0+$/, ''));

let run = 0;

describe('quota invariants over random ticket lives', () => {
  it('outcomes follow the model and used/locked stay within the caps (seed 0x71c4e7)', async () => {
    await fc.assert(
      fc.asyncProperty(limits, fc.array(step, { minLength: 1, maxLength: 20 }), async ({ cap: CAP, txCap: TX_CAP }, steps) => {
        const end = T0 + END_MIN * 60_000;
        const capText = hundredths(CAP);
        const desk = await Desk.open(refereeSpec(`prop-${run++}`, mandate({ quota: { cap: capText, weights: { close: '0.5' } }, tx_cap: TX_CAP, caps: { size: '3', leverage: '10', slippage: '0.05' }, expires_at: end })));
        const m = { used: 0, locked: 0, usedTx: 0, lockedTx: 0, terminated: false, tickets: [] as ModelTicket[] };
        let time = T0;
        let nonce = 0;
        for (const s of steps) {
          time += 60_000 + (s.kind === 'wait' ? s.minutes * 60_000 : 0);
          let data: CanonicalObject | undefined;
          let expectTransition: string | undefined;
          const live = (t: ModelTicket) => time < Math.min(t.expires, end);
          if ((s.kind === 'redeem' || s.kind === 'release') && m.tickets.length > 0) {
            const id = (s.pick % m.tickets.length) + 1;
            const t = m.tickets[id - 1]!;
            const ref = { instance: INSTANCE, session: desk.sid, ticket: id, proofHash: t.proof };
            if (s.kind === 'redeem') {
              data = { referee: { redemptions: [await signRedemption(KEY_EXECUTOR, ref, t.intent)] } };
              const ok = t.state === 'ACTIVE' && !m.terminated && live(t);
              expectTransition = ok ? 'ok' : t.state !== 'ACTIVE' ? 'ticket_not_active' : m.terminated ? 'redeem_after_termination' : 'ticket_expired';
              if (ok) {
                t.state = 'REDEEMED';
                m.locked -= t.weight;
                m.lockedTx--;
                m.used += t.weight;
                m.usedTx++;
              }
            } else {
              const item = s.by === 'anyone' ? { ticket: id, by: 'anyone' } : await signRelease(s.by === 'principal' ? KEY_PRINCIPAL : KEY_OPERATOR, s.by, ref);
              data = { referee: { releases: [item] } };
              const ok = t.state === 'ACTIVE' && (s.by !== 'anyone' || m.terminated || !live(t));
              expectTransition = ok ? 'ok' : t.state !== 'ACTIVE' ? 'ticket_not_active' : 'release_not_allowed';
              if (ok) {
                t.state = 'RELEASED';
                m.locked -= t.weight;
                m.lockedTx--;
              }
            }
          } else if (s.kind === 'terminate') {
            data = { referee: { terminate: await signTermination(KEY_PRINCIPAL, { instance: INSTANCE, session: desk.sid }) } };
            expectTransition = m.terminated ? 'already_terminated' : 'ok';
            m.terminated = true;
          }
          let bytes: Uint8Array | string = 'tick';
          let expectAdmit: string | undefined;
          let intent: Intent | undefined;
          // Weight is tenths × 10 hundredths for open, × 5 for close; a `fit` admission is sized to the free quota ± one step.
          let tenths = 0;
          if (s.kind === 'admit') {
            const per = s.action === 'open' ? 10 : 5;
            const exact = Math.floor((CAP - m.used - m.locked) / per);
            tenths = s.fit === undefined ? s.tenths : Math.max(1, s.fit === 'exact' ? exact : s.fit === 'over' ? exact + 1 : exact - 1);
          }
          if (s.kind === 'admit') {
            const size = tenths % 10 === 0 ? String(tenths / 10) : `${Math.trunc(tenths / 10)}.${tenths % 10}`;
            const base = { nonce: `p${run}-${nonce++}`, ttl: iso(time + s.ttlMin * 60_000), size };
            intent = await signed(
              (s.action === 'open' ? openIntent(base) : { action: 'close', agent_id: 'alpha', market: 'BTC-PERP', max_slippage: '0.01', ...base }) as Parameters<typeof signed>[0],
            );
            bytes = carry(intent);
            const weight = tenths * (s.action === 'open' ? 10 : 5);
            expectAdmit = m.terminated
              ? 'mandate_terminated'
              : time >= end
                ? 'mandate_expired'
                : tenths > 30
                  ? 'cap_exceeded'
                  : m.used + m.locked + weight > CAP
                    ? 'quota_exhausted'
                    : m.usedTx + m.lockedTx >= TX_CAP
                      ? 'tx_cap_reached'
                      : 'ok';
            if (expectAdmit === 'ok') {
              m.locked += weight;
              m.lockedTx++;
            }
          }
          const r = ruling(await desk.answer(bytes, { time, ...(data === undefined ? {} : { data }) }));
          if (expectTransition !== undefined) {
            const o = r.transitions?.[0];
            expect(o && ('code' in o ? o.code : 'ok')).toBe(expectTransition);
          }
          if (expectAdmit !== undefined) {
            if (expectAdmit === 'ok') {
              expect(r.ticket).toBeDefined();
              m.tickets.push({ weight: s.kind === 'admit' ? tenths * (s.action === 'open' ? 10 : 5) : 0, expires: Math.min(end, time + (s.kind === 'admit' ? s.ttlMin : 0) * 60_000 + 1), state: 'ACTIVE', intent: intent!, proof: r.ticket!.proof_hash });
              expect(r.ticket!.expires_at).toBe(m.tickets[m.tickets.length - 1]!.expires);
            } else expect(r.policy).toMatchObject({ code: expectAdmit });
          }
          const q = (await desk.state()).quota;
          expect(q).toEqual({ cap: capText, used: hundredths(m.used), locked: hundredths(m.locked), free: hundredths(CAP - m.used - m.locked), tx_cap: TX_CAP, used_txs: m.usedTx, locked_txs: m.lockedTx });
          expect(decCmp(q.used, '0')).toBeGreaterThanOrEqual(0);
          expect(decCmp(q.locked, '0')).toBeGreaterThanOrEqual(0);
          expect(decCmp(decAdd(q.used, q.locked), q.cap)).toBeLessThanOrEqual(0);
          expect(q.used_txs + q.locked_txs).toBeLessThanOrEqual(q.tx_cap);
        }
      }),
      { seed: 0x71c4e7, numRuns: 80 },
    );
  });
});
