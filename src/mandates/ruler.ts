/**
 * A session whose authority is an AP2 open payment mandate (PROTOCOL.md §16):
 * the genesis spec carries it byte for byte (`spec.ap2 = {mandate, issuer,
 * audience}`), and each authored turn is a closed payment mandate, ruled here
 * from the transcript alone. The mandate's history (cumulative spend, uses,
 * last use) is derived from the store, across every session that spends the
 * same open mandate: use `n` of mandate `M` is the store reservation
 * (`ap2:<M>`, `use:<n>`), written atomically with the turn that spends it, so
 * a claim exists exactly when its entry does, and two racing spends of one
 * use number cannot both be written (the loser is ruled again on fresh state).
 */
import { createHash } from 'node:crypto';
import type { JWK } from 'jose';
import { canonicalBytes, parseEntry, parseStrictJson, TallyError, type CanonicalObject, type CanonicalValue, type SessionSpec } from '../protocol/index.js';
import type { NonceClaim, NonceOwner, TranscriptStore } from '../store/index.js';
import type { RecordedReservation, RuleContext, RuleOutcome, TurnRuler } from '../session/index.js';
import { refuse, type Ap2Code, type MandateResult } from './codes.js';
import { verifyClosedMandate } from './closed.js';
import { evaluatePayment, type MandateHistory } from './constraints.js';
import { b64sha256, publicP256, verifyOpenMandate } from './open.js';
import { splitCompact } from './sdjwt.js';
import { readParty, verifyCheckoutJwt, type Parties } from './receipts.js';
import { frameReceipts, previousReceipt, recordedPreviousReceipt } from './presentations.js';

/** The session spec member that makes a session AP2-governed. */
export const AP2_SPEC_KEY = 'ap2';

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
const hex = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

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
      const s = readAp2Spec(spec);
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
      const spec = readAp2Spec(ctx.spec);
      if (!spec.ok) return refused(spec.code, spec.message);
      // The receipts the answered frame carries are facts whatever the turn: verified, listed, claimed (§16.8).
      const key = `ap2:${b64sha256(spec.value.mandate)}`;
      const intentHash = hex(ctx.authored);
      const seen = await frameReceipts(ctx, key, spec.value.parties, intentHash);
      const out = await decide(ctx, spec.value, key, intentHash, seen.references);
      if (seen.listed.length === 0 && seen.claims.length === 0) return out;
      return { ruling: ruling({ ...(out.ruling['ap2'] as CanonicalObject), receipts: seen.listed }), nonces: [...out.nonces, ...seen.claims] };
    },
  };

  async function decide(ctx: RuleContext, spec: Ap2Spec, key: string, intentHash: string, inFrame: ReadonlySet<string>): Promise<RuleOutcome> {
    {
      const now = Math.floor(ctx.frameTime / 1000);
      const open = await verifyOpenMandate(spec.mandate, { issuerKey: spec.issuer, now });
      if (!open.ok) return refused(open.code, open.message);
      const m = open.value;
      if (m.kind !== 'payment') return refused('constraint-unsupported', 'sessions under an open checkout mandate are not ruled yet');
      const turn = readTurn(ctx.authored);
      if (!turn) return refused('turn-malformed', 'an authored turn is canonical JSON {checkout_jwt, open_checkout, payment}');
      const checkout = await verifyCheckoutJwt(turn.checkoutJwt, spec.parties.merchant);
      if (!checkout.ok) return refused(checkout.code, checkout.message, { mandate: m.id });
      const closed = await verifyClosedMandate(turn.payment, m, {
        now,
        aud: spec.audience,
        checkoutHashes: new Set([b64sha256(turn.checkoutJwt)]),
        openCheckoutHash: b64sha256(turn.openCheckout),
      });
      if (!closed.ok) return refused(closed.code, closed.message, { mandate: m.id });
      if (closed.value.kind !== 'payment') return refused('closed-vct', 'a payment session takes payment mandates');
      const kbNonce = closed.value.claims['nonce'] as string;
      const base = { mandate: m.id, transaction_id: closed.value.transactionId, reference: b64sha256(turn.payment), amount: closed.value.request.amount, currency: closed.value.request.currency, at: now };
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
      const prior = await previousReceipt(ctx, key, uses[uses.length - 1]?.reference, inFrame);
      if (!prior.ok) return refused('receipt-missing', prior.message, { ...base, spent_before: history.spent, uses_before: history.uses, external });
      const facts = { spent_before: history.spent, uses_before: history.uses, external, ...prior.value };
      const violations = evaluatePayment(m.constraints, closed.value.request, history, now);
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
