/**
 * A session whose authority is an AP2 open mandate (PROTOCOL.md §16): the
 * genesis spec carries it byte for byte (`spec.ap2 = {mandate, issuer,
 * audience, merchant, provider}`), or a Verifiable Intent credential
 * (`spec.vi`, §16.10). Under an open payment mandate (or VI) each authored
 * turn is a closed payment mandate (with VI's L3b checkout when the spec pins
 * the parties); under an open checkout mandate it is a closed checkout
 * mandate (§16.11). Each is ruled here from the transcript alone. The
 * mandate's history (cumulative spend, uses, last use) is derived from the
 * store, across every session that spends the same open mandate: use `n` of
 * mandate `M` is the store reservation (`ap2:<M>`, `use:<n>`), written
 * atomically with the turn that spends it, so a claim exists exactly when its
 * entry does, and two racing spends of one use number cannot both be written
 * (the loser is ruled again on fresh state).
 */
import type { JWK } from 'jose';
import type { CanonicalObject, CanonicalValue, SessionSpec } from '../protocol/index.js';
import type { NonceClaim, TranscriptStore } from '../store/index.js';
import type { RecordedReservation, RuleContext, RuleOutcome, TurnRuler } from '../session/index.js';
import { readCompactTurn } from './turn-body.js';
import { refuse, type Ap2Code, type MandateResult } from './codes.js';
import { verifyClosedMandate, type ClosedMandate } from './closed.js';
import { verifyCheckoutMandate, readCheckoutTurn } from './checkout.js';
import { evaluateCheckout, evaluatePayment, type MandateHistory, type Violation } from './constraints.js';
import { readUses, recordedExternal, rulingAt } from './history.js';
import { b64sha256, publicP256, verifyOpenMandate, type OpenMandate } from './open.js';
import { hexSha256 as hex } from './digest.js';
import { VI_SPEC_KEY, readViPairTurn, readViSpec, readViTurn, verifyViPayment, type ViSpec } from './vi-session.js';
import { AP2_SPEC_KEY } from './spec-keys.js';
import { verifyViCheckout } from './vi-checkout.js';
import { verifyViCredential } from './vi.js';
import { splitCompact } from './sdjwt.js';
import { readParty, verifyCheckoutJwt, type Parties } from './receipts.js';
import { frameReceipts, previousCheckoutRejected, previousReceipt, recordedPreviousReceipt, type FrameReceipts } from './presentations.js';

export { AP2_SPEC_KEY } from './spec-keys.js';

export interface Ap2Spec {
  /** The open mandate presentation (`<jwt>~<d>~…~`), verbatim. */
  readonly mandate: string;
  /** The user's public key, the mandate's issuer. */
  readonly issuer: JWK;
  /** The audience every closed mandate's KB-JWT names. */
  readonly audience: string;
  /** The merchant (signs checkout JWTs and checkout receipts) and the credential provider (payment and mandate receipts). */
  readonly parties: Parties;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The spec's ap2 member, checked for shape (the signature is checked at each turn, against that frame's time). */
export function readAp2Spec(spec: SessionSpec): MandateResult<Ap2Spec> {
  const a = spec[AP2_SPEC_KEY];
  if (!isObject(a) || Object.keys(a).length !== 5 || typeof a.mandate !== 'string' || typeof a.audience !== 'string' || a.audience === '') {
    return refuse('ap2-spec', 'spec.ap2 must be {mandate: "<jwt>~<d>~…~", issuer: <EC P-256 JWK>, audience: "<string>", merchant: {iss, key}, provider: {iss, key}}');
  }
  const split = splitCompact(a.mandate);
  if (!split.ok || split.value.kb !== '') return refuse('ap2-spec', 'spec.ap2.mandate is not an SD-JWT presentation without key binding');
  const issuer = publicP256(a.issuer);
  if (!issuer) return refuse('ap2-spec', 'spec.ap2.issuer is not a public EC P-256 JWK');
  const merchant = readParty(a.merchant);
  const provider = readParty(a.provider);
  if (!merchant || !provider) return refuse('ap2-spec', 'spec.ap2.merchant and spec.ap2.provider are {iss: "<name>", key: <EC P-256 JWK>}');
  return { ok: true, value: { mandate: a.mandate, issuer, audience: a.audience, parties: { merchant, provider } } };
}

function ruling(o: Record<string, CanonicalValue>): CanonicalObject {
  return { ap2: o as CanonicalObject };
}
const refused = (code: Ap2Code, message: string, extra: Record<string, CanonicalValue> = {}): RuleOutcome => ({ ruling: ruling({ admitted: false, code, message, ...extra }), nonces: [] });

/** The turn body of a payment session: canonical JSON {checkout_jwt, open_checkout, payment}, or undefined. */
export function readTurn(bytes: Uint8Array): { checkoutJwt: string; openCheckout: string; payment: string } | undefined {
  const v = readCompactTurn(bytes, ['checkout_jwt', 'open_checkout', 'payment']);
  return v && { checkoutJwt: v.checkout_jwt, openCheckout: v.open_checkout, payment: v.payment };
}

/** A verified payment; `checkout` the violations of a VI L3b's cart against the L2 checkout mandate, when there is one. */
type Verified = { ok: true; m: OpenMandate; closed: ClosedMandate & { kind: 'payment' }; reference: string; checkout?: readonly Violation[] } | { ok: false; outcome: RuleOutcome };

/** An AP2 payment session's turn under the verified open mandate: the merchant's checkout JWT, then the closed payment mandate against it (§16.3). */
async function ap2Payment(spec: Ap2Spec, m: OpenMandate, authored: Uint8Array, now: number): Promise<Verified> {
  const turn = readTurn(authored);
  if (!turn) return { ok: false, outcome: refused('turn-malformed', 'an authored turn is canonical JSON {checkout_jwt, open_checkout, payment}') };
  const checkout = await verifyCheckoutJwt(turn.checkoutJwt, spec.parties.merchant);
  if (!checkout.ok) return { ok: false, outcome: refused(checkout.code, checkout.message, { mandate: m.id }) };
  const closed = await verifyClosedMandate(turn.payment, m, { now, aud: spec.audience, checkoutHashes: new Set([b64sha256(turn.checkoutJwt)]), openCheckoutHash: b64sha256(turn.openCheckout) });
  if (!closed.ok) return { ok: false, outcome: refused(closed.code, closed.message, { mandate: m.id }) };
  if (closed.value.kind !== 'payment') return { ok: false, outcome: refused('closed-vct', 'a payment session takes payment mandates') };
  return { ok: true, m, closed: closed.value, reference: b64sha256(turn.payment) };
}

/**
 * A VI session's turn: the L1 + L2 credential at frame time `now`, then — when
 * the spec pins the parties — the agent's L3b with the merchant's checkout JWT
 * (vi-checkout.ts), then the L3a against it (§16.10).
 */
async function viPayment(spec: ViSpec, authored: Uint8Array, now: number): Promise<Verified> {
  const cred = await verifyViCredential(spec.l1, spec.l2, { issuerKey: spec.issuer, now });
  if (!cred.ok) return { ok: false, outcome: refused(cred.code, cred.message) };
  let payment: string, checkoutJwt: string, checkout: readonly Violation[] | undefined;
  if (spec.parties) {
    const pair = readViPairTurn(authored);
    if (!pair) return { ok: false, outcome: refused('turn-malformed', 'an authored turn of a VI session with pinned parties is canonical JSON {checkout, payment} (the L3b and the L3a)') };
    const l3b = await verifyViCheckout(pair.checkout, cred.value, { now, merchant: spec.parties.merchant });
    if (!l3b.ok) return { ok: false, outcome: refused(l3b.code, l3b.message, { mandate: cred.value.id }) };
    payment = pair.payment;
    checkoutJwt = l3b.value.checkoutJwt;
    checkout = evaluateCheckout(l3b.value.constraints, l3b.value.cart);
  } else {
    const turn = readViTurn(authored);
    if (!turn) return { ok: false, outcome: refused('turn-malformed', 'an authored turn of a VI session is canonical JSON {checkout_jwt, payment}') };
    payment = turn.payment;
    checkoutJwt = turn.checkoutJwt;
  }
  const closed = await verifyViPayment(payment, cred.value, { now, aud: spec.audience, checkoutJwt });
  if (!closed.ok) return { ok: false, outcome: refused(closed.code, closed.message, { mandate: cred.value.id }) };
  return { ok: true, m: cred.value, closed: closed.value, reference: b64sha256(payment), ...(checkout === undefined ? {} : { checkout }) };
}

/** A session is ruled under spec.vi when it carries that member and no spec.ap2 (the one choice checkSpec and rule share). */
const isViSession = (spec: SessionSpec): boolean => spec[VI_SPEC_KEY] !== undefined && spec[AP2_SPEC_KEY] === undefined;

export interface Ap2RulerOptions {
  /** The engine's store: the ruler reads other sessions' spending turns from it. */
  readonly store: TranscriptStore;
}

/** The TurnRuler for sessions under an AP2 open payment or checkout mandate, or a VI credential. */
export function createAp2Ruler(options: Ap2RulerOptions): TurnRuler {
  const store = options.store;
  const rulingOf = (session: string, index: number) => rulingAt(store, session, index);

  /** The receipts the answered frame carries are facts whatever the turn: verified, listed, claimed (§16.8), around `ruleTurn`. */
  async function withReceipts(ctx: RuleContext, key: string, parties: Parties, intentHash: string, ruleTurn: (seen: FrameReceipts) => Promise<RuleOutcome>): Promise<RuleOutcome> {
    const seen = await frameReceipts(ctx, key, parties, intentHash);
    const out = await ruleTurn(seen);
    if (seen.listed.length === 0 && seen.claims.length === 0) return out;
    return { ruling: ruling({ ...(out.ruling['ap2'] as CanonicalObject), receipts: seen.listed }), nonces: [...out.nonces, ...seen.claims] };
  }

  return {
    checkSpec(spec: SessionSpec): string | undefined {
      const s = isViSession(spec) ? readViSpec(spec) : readAp2Spec(spec);
      return s.ok ? undefined : s.message;
    },

    recordedReservations(recorded: CanonicalObject, sessionId: string): readonly RecordedReservation[] {
      const a = recorded['ap2'];
      if (!isObject(a) || typeof a['mandate'] !== 'string') return [];
      const agentId = `ap2:${a['mandate']}`;
      const uses: RecordedReservation[] = recordedExternal(recorded).map((u) => ({ kind: 'ap2-use', agentId, nonce: `use:${u.use}`, owner: { intentHash: '', sessionId: u.session, index: u.index } }));
      const r = recordedPreviousReceipt(recorded);
      return r && r.session !== sessionId ? [...uses, { kind: 'ap2-receipt', agentId, nonce: `receipt:${r.reference}`, owner: { intentHash: '', sessionId: r.session, index: r.index } }] : uses;
    },

    async rule(ctx: RuleContext): Promise<RuleOutcome> {
      const now = Math.floor(ctx.frameTime / 1000);
      const intentHash = hex(ctx.authored);
      if (isViSession(ctx.spec)) {
        const spec = readViSpec(ctx.spec);
        if (!spec.ok) return refused(spec.code, spec.message);
        const parties = spec.value.parties;
        // A VI spec of the payment side only pins no merchant or provider: no receipts, and AP2's receipt rule does not apply (§16.10).
        if (!parties) {
          const v = await viPayment(spec.value, ctx.authored, now);
          return v.ok ? spend(ctx, v, intentHash, undefined) : v.outcome;
        }
        return withReceipts(ctx, `ap2:${b64sha256(`${spec.value.l1}${spec.value.l2}`)}`, parties, intentHash, async (seen) => {
          const v = await viPayment(spec.value, ctx.authored, now);
          return v.ok ? spend(ctx, v, intentHash, seen.references) : v.outcome;
        });
      }
      const spec = readAp2Spec(ctx.spec);
      if (!spec.ok) return refused(spec.code, spec.message);
      return withReceipts(ctx, `ap2:${b64sha256(spec.value.mandate)}`, spec.value.parties, intentHash, async (seen) => {
        const open = await verifyOpenMandate(spec.value.mandate, { issuerKey: spec.value.issuer, now });
        if (!open.ok) return refused(open.code, open.message);
        if (open.value.kind === 'checkout') return checkout(ctx, spec.value, open.value, intentHash, seen);
        const v = await ap2Payment(spec.value, open.value, ctx.authored, now);
        return v.ok ? spend(ctx, v, intentHash, seen.references) : v.outcome;
      });
    },
  };

  /**
   * A verified payment against the mandate's history; `inFrame` the receipt
   * references the answered frame verified, or undefined when the session is
   * not under AP2's receipt rule (a VI session without parties).
   */
  async function spend(ctx: RuleContext, verified: Verified & { ok: true }, intentHash: string, inFrame: ReadonlySet<string> | undefined): Promise<RuleOutcome> {
    const now = Math.floor(ctx.frameTime / 1000);
    const { m, closed } = verified;
    const key = `ap2:${m.id}`;
    const kbNonce = closed.claims['nonce'] as string;
    const base = { mandate: m.id, transaction_id: closed.transactionId, reference: verified.reference, amount: closed.request.amount, currency: closed.request.currency, at: now };
    if (await ctx.nonceOwner(key, `kb:${kbNonce}`)) return refused('kb-replayed', `KB-JWT nonce ${kbNonce} was already admitted under this mandate`, base);

    // The history: every use 0..n-1 of this mandate, in any session of the store.
    const uses = await readUses(store, ctx, key, 'payment');
    const history: MandateHistory = {
      spent: uses.reduce((s, u) => s + (u.amount ?? 0), 0),
      uses: uses.length,
      ...(uses.length === 0 ? {} : { lastUse: Math.max(...uses.map((u) => u.at)) }),
    };
    const external = uses.filter((u) => u.session !== ctx.sessionId).map((u) => ({ ...u }) as unknown as CanonicalObject);
    const prior = inFrame === undefined ? ({ ok: true, value: {} } as const) : await previousReceipt(ctx, key, uses[uses.length - 1]?.reference, inFrame);
    if (!prior.ok) return refused('receipt-missing', prior.message, { ...base, spent_before: history.spent, uses_before: history.uses, external });
    const facts = { spent_before: history.spent, uses_before: history.uses, external, ...prior.value };
    const violations = [...evaluatePayment(m.constraints, closed.request, history, now), ...(verified.checkout ?? [])];
    if (violations.length > 0) {
      return refused('constraint-violated', violations.map((v) => `${v.constraint}: ${v.reason}`).join('; '), { ...base, ...facts, violations: violations.map((v) => v.constraint) });
    }
    const nonces: NonceClaim[] = [
      { agentId: key, nonce: `use:${uses.length}`, intentHash },
      { agentId: key, nonce: `kb:${kbNonce}`, intentHash },
    ];
    return { ruling: ruling({ admitted: true, ...base, use: uses.length, ...facts }), nonces };
  }

  /**
   * A checkout session's turn (§16.11): the closed checkout mandate with the
   * merchant's checkout JWT, `kb-replayed`, the previous checkout's rejection,
   * then the open mandate's constraints against the cart.
   */
  async function checkout(ctx: RuleContext, spec: Ap2Spec, m: OpenMandate, intentHash: string, seen: FrameReceipts): Promise<RuleOutcome> {
    const now = Math.floor(ctx.frameTime / 1000);
    const presentation = readCheckoutTurn(ctx.authored);
    if (presentation === undefined) return refused('turn-malformed', 'an authored turn of a checkout session is canonical JSON {checkout}');
    const v = await verifyCheckoutMandate(presentation, m, { now, aud: spec.audience, merchant: spec.parties.merchant });
    if (!v.ok) return refused(v.code, v.message, { mandate: m.id });
    const key = `ap2:${m.id}`;
    const { checkoutHash, nonce, cart } = v.value;
    const base = { mandate: m.id, transaction_id: checkoutHash, reference: checkoutHash, merchant: cart.merchant.id, at: now };
    if (await ctx.nonceOwner(key, `kb:${nonce}`)) return refused('kb-replayed', `KB-JWT nonce ${nonce} was already admitted under this mandate`, base);
    const uses = await readUses(store, ctx, key, 'checkout');
    const external = uses.filter((u) => u.session !== ctx.sessionId).map((u) => ({ ...u }) as unknown as CanonicalObject);
    const prior = await previousCheckoutRejected(ctx, key, uses[uses.length - 1]?.reference, seen, rulingOf);
    const facts = { uses_before: uses.length, external, ...prior.facts };
    if (!prior.ok) return refused(prior.code!, prior.message!, { ...base, ...facts });
    const violations = evaluateCheckout(m.constraints, cart);
    if (violations.length > 0) {
      return refused('constraint-violated', violations.map((x) => `${x.constraint}: ${x.reason}`).join('; '), { ...base, ...facts, violations: violations.map((x) => x.constraint) });
    }
    const nonces: NonceClaim[] = [
      { agentId: key, nonce: `use:${uses.length}`, intentHash },
      { agentId: key, nonce: `kb:${nonce}`, intentHash },
    ];
    return { ruling: ruling({ admitted: true, ...base, use: uses.length, ...facts }), nonces };
  }
}
