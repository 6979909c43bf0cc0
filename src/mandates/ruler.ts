/**
 * A session whose authority is an AP2 open payment mandate (PROTOCOL.md §16):
 * the genesis spec carries it byte for byte (`spec.ap2 = {mandate, issuer,
 * audience, merchant, provider}`), or a Verifiable Intent credential
 * (`spec.vi`, §16.10, without receipts), and each authored turn is a closed
 * payment mandate, ruled here
 * from the transcript alone. The mandate's history (cumulative spend, uses,
 * last use) is derived from the store, across every session that spends the
 * same open mandate: use `n` of mandate `M` is the store reservation
 * (`ap2:<M>`, `use:<n>`), written atomically with the turn that spends it, so
 * a claim exists exactly when its entry does, and two racing spends of one
 * use number cannot both be written (the loser is ruled again on fresh state).
 */
import type { JWK } from 'jose';
import { canonicalBytes, parseEntry, parseStrictJson, TallyError, type CanonicalObject, type CanonicalValue, type SessionSpec } from '../protocol/index.js';
import type { NonceClaim, NonceOwner, TranscriptStore } from '../store/index.js';
import type { RecordedReservation, RuleContext, RuleOutcome, TurnRuler } from '../session/index.js';
import { refuse, type Ap2Code, type MandateResult } from './codes.js';
import { verifyClosedMandate, type ClosedMandate } from './closed.js';
import { evaluatePayment, type MandateHistory } from './constraints.js';
import { b64sha256, publicP256, verifyOpenMandate, type OpenMandate } from './open.js';
import { hexSha256 as hex } from './digest.js';
import { VI_SPEC_KEY, readViSpec, readViTurn, verifyViPayment } from './vi-session.js';
import { AP2_SPEC_KEY } from './spec-keys.js';
import { verifyViCredential } from './vi.js';
import { splitCompact } from './sdjwt.js';
import { readParty, verifyCheckoutJwt, type Parties } from './receipts.js';
import { frameReceipts, previousReceipt, recordedPreviousReceipt } from './presentations.js';

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

/** One earlier use of the mandate, as a ruling records it; `reference` is base64url SHA-256 of its closed payment mandate. */
interface Use { readonly use: number; readonly session: string; readonly index: number; readonly amount: number; readonly at: number; readonly reference: string }

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

/** The turn body: canonical JSON {checkout_jwt, open_checkout, payment}, or undefined. */
export function readTurn(bytes: Uint8Array): { checkoutJwt: string; openCheckout: string; payment: string } | undefined {
  const r = parseStrictJson(bytes);
  if (!r.ok || !isObject(r.value)) return undefined;
  const v = r.value;
  if (Object.keys(v).length !== 3 || typeof v.checkout_jwt !== 'string' || typeof v.open_checkout !== 'string' || typeof v.payment !== 'string') return undefined;
  const canon = canonicalBytes(v as CanonicalObject);
  if (canon.length !== bytes.length || canon.some((b, i) => b !== bytes[i])) return undefined;
  return { checkoutJwt: v.checkout_jwt, openCheckout: v.open_checkout, payment: v.payment };
}

/** Uses recorded as external (other sessions') in a ruling. */
function recordedExternal(recorded: CanonicalObject | undefined): Use[] {
  const a = recorded?.['ap2'];
  const ext = isObject(a) && Array.isArray(a['external']) ? a['external'] : [];
  return ext.filter(isObject).map((u) => u as unknown as Use);
}

type Verified = { ok: true; m: OpenMandate; closed: ClosedMandate & { kind: 'payment' }; reference: string } | { ok: false; outcome: RuleOutcome };

/** An AP2 session's turn: the open mandate at frame time `now`, the merchant's checkout JWT, then the closed payment mandate against it (§16.2, §16.3). */
async function ap2Payment(spec: Ap2Spec, authored: Uint8Array, now: number): Promise<Verified> {
  const open = await verifyOpenMandate(spec.mandate, { issuerKey: spec.issuer, now });
  if (!open.ok) return { ok: false, outcome: refused(open.code, open.message) };
  const m = open.value;
  if (m.kind !== 'payment') return { ok: false, outcome: refused('constraint-unsupported', 'sessions under an open checkout mandate are not ruled yet') };
  const turn = readTurn(authored);
  if (!turn) return { ok: false, outcome: refused('turn-malformed', 'an authored turn is canonical JSON {checkout_jwt, open_checkout, payment}') };
  const checkout = await verifyCheckoutJwt(turn.checkoutJwt, spec.parties.merchant);
  if (!checkout.ok) return { ok: false, outcome: refused(checkout.code, checkout.message, { mandate: m.id }) };
  const closed = await verifyClosedMandate(turn.payment, m, { now, aud: spec.audience, checkoutHashes: new Set([b64sha256(turn.checkoutJwt)]), openCheckoutHash: b64sha256(turn.openCheckout) });
  if (!closed.ok) return { ok: false, outcome: refused(closed.code, closed.message, { mandate: m.id }) };
  if (closed.value.kind !== 'payment') return { ok: false, outcome: refused('closed-vct', 'a payment session takes payment mandates') };
  return { ok: true, m, closed: closed.value, reference: b64sha256(turn.payment) };
}

/** A VI session's turn: the L1 + L2 credential at frame time `now`, then the agent's L3a against it (§16.10). */
async function viPayment(specIn: SessionSpec, authored: Uint8Array, now: number): Promise<Verified> {
  const spec = readViSpec(specIn);
  if (!spec.ok) return { ok: false, outcome: refused(spec.code, spec.message) };
  const cred = await verifyViCredential(spec.value.l1, spec.value.l2, { issuerKey: spec.value.issuer, now });
  if (!cred.ok) return { ok: false, outcome: refused(cred.code, cred.message) };
  const turn = readViTurn(authored);
  if (!turn) return { ok: false, outcome: refused('turn-malformed', 'an authored turn of a VI session is canonical JSON {checkout_jwt, payment}') };
  const closed = await verifyViPayment(turn.payment, cred.value, { now, aud: spec.value.audience, checkoutJwt: turn.checkoutJwt });
  if (!closed.ok) return { ok: false, outcome: refused(closed.code, closed.message, { mandate: cred.value.id }) };
  return { ok: true, m: cred.value, closed: closed.value, reference: b64sha256(turn.payment) };
}

/** A session is ruled under spec.vi when it carries that member and no spec.ap2 (the one choice checkSpec and rule share). */
const isViSession = (spec: SessionSpec): boolean => spec[VI_SPEC_KEY] !== undefined && spec[AP2_SPEC_KEY] === undefined;

export interface Ap2RulerOptions {
  /** The engine's store: the ruler reads other sessions' spending turns from it. */
  readonly store: TranscriptStore;
}

/** The TurnRuler for sessions under an AP2 open payment mandate. */
export function createAp2Ruler(options: Ap2RulerOptions): TurnRuler {
  const store = options.store;

  async function useOf(ctx: RuleContext, n: number, owner: NonceOwner): Promise<Use> {
    if (ctx.recorded !== undefined && owner.sessionId !== ctx.sessionId) {
      const u = recordedExternal(ctx.recorded).find((x) => x.use === n);
      if (!u) throw new TallyError('TALLY_AP2_HISTORY', 'The recorded ruling names no external use the replay needs.', { details: `use ${n}` });
      return u;
    }
    const rows = await store.readRange(owner.sessionId, owner.index, owner.index + 1);
    const parsed = rows[0] ? parseEntry(JSON.parse(new TextDecoder().decode(rows[0].bytes))) : undefined;
    const a = parsed?.ok && parsed.entry.kind === 'turn' ? parsed.entry.ruling?.['ap2'] : undefined;
    if (!isObject(a) || a['use'] !== n || typeof a['amount'] !== 'number' || typeof a['at'] !== 'number' || typeof a['reference'] !== 'string') {
      throw new TallyError('TALLY_AP2_HISTORY', 'A reservation of a mandate use names no spending turn.', { details: `${owner.sessionId}#${owner.index} use ${n}` });
    }
    return { use: n, session: owner.sessionId, index: owner.index, amount: a['amount'], at: a['at'], reference: a['reference'] };
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
      // A VI session pins no merchant or provider: no receipts, and AP2's receipt rule does not apply (§16.10).
      if (isViSession(ctx.spec)) {
        const v = await viPayment(ctx.spec, ctx.authored, now);
        return v.ok ? spend(ctx, v, intentHash, undefined) : v.outcome;
      }
      const spec = readAp2Spec(ctx.spec);
      if (!spec.ok) return refused(spec.code, spec.message);
      // The receipts the answered frame carries are facts whatever the turn: verified, listed, claimed (§16.8).
      const key = `ap2:${b64sha256(spec.value.mandate)}`;
      const seen = await frameReceipts(ctx, key, spec.value.parties, intentHash);
      const v = await ap2Payment(spec.value, ctx.authored, now);
      const out = v.ok ? await spend(ctx, v, intentHash, seen.references) : v.outcome;
      if (seen.listed.length === 0 && seen.claims.length === 0) return out;
      return { ruling: ruling({ ...(out.ruling['ap2'] as CanonicalObject), receipts: seen.listed }), nonces: [...out.nonces, ...seen.claims] };
    },
  };

  /**
   * A verified payment against the mandate's history; `inFrame` the receipt
   * references the answered frame verified, or undefined when the session is
   * not under AP2's receipt rule (a VI session).
   */
  async function spend(ctx: RuleContext, verified: Verified & { ok: true }, intentHash: string, inFrame: ReadonlySet<string> | undefined): Promise<RuleOutcome> {
    {
      const now = Math.floor(ctx.frameTime / 1000);
      const { m, closed } = verified;
      const key = `ap2:${m.id}`;
      const kbNonce = closed.claims['nonce'] as string;
      const base = { mandate: m.id, transaction_id: closed.transactionId, reference: verified.reference, amount: closed.request.amount, currency: closed.request.currency, at: now };
      if (await ctx.nonceOwner(key, `kb:${kbNonce}`)) return refused('kb-replayed', `KB-JWT nonce ${kbNonce} was already admitted under this mandate`, base);

      // The history: every use 0..n-1 of this mandate, in any session of the store.
      const uses: Use[] = [];
      for (;;) {
        const owner = await ctx.nonceOwner(key, `use:${uses.length}`);
        if (!owner) break;
        uses.push(await useOf(ctx, uses.length, owner));
      }
      const history: MandateHistory = {
        spent: uses.reduce((s, u) => s + u.amount, 0),
        uses: uses.length,
        ...(uses.length === 0 ? {} : { lastUse: Math.max(...uses.map((u) => u.at)) }),
      };
      const external = uses.filter((u) => u.session !== ctx.sessionId).map((u) => ({ ...u }) as unknown as CanonicalObject);
      const prior = inFrame === undefined ? ({ ok: true, value: {} } as const) : await previousReceipt(ctx, key, uses[uses.length - 1]?.reference, inFrame);
      if (!prior.ok) return refused('receipt-missing', prior.message, { ...base, spent_before: history.spent, uses_before: history.uses, external });
      const facts = { spent_before: history.spent, uses_before: history.uses, external, ...prior.value };
      const violations = evaluatePayment(m.constraints, closed.request, history, now);
      if (violations.length > 0) {
        return refused('constraint-violated', violations.map((v) => `${v.constraint}: ${v.reason}`).join('; '), { ...base, ...facts, violations: violations.map((v) => v.constraint) });
      }
      const nonces: NonceClaim[] = [
        { agentId: key, nonce: `use:${uses.length}`, intentHash },
        { agentId: key, nonce: `kb:${kbNonce}`, intentHash },
      ];
      return { ruling: ruling({ admitted: true, ...base, use: uses.length, ...facts }), nonces };
    }
  }
}
