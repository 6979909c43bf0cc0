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
import { verifyClosedMandate, type ClosedMandate } from './closed.js';
import { evaluatePayment, type MandateHistory } from './constraints.js';
import { b64sha256, publicP256, verifyOpenMandate, type OpenMandate } from './open.js';
import { VI_SPEC_KEY, readViSpec, readViTurn, verifyViPayment } from './vi-session.js';
import { AP2_SPEC_KEY } from './spec-keys.js';
import { verifyViCredential } from './vi.js';
import { splitCompact } from './sdjwt.js';

export { AP2_SPEC_KEY } from './spec-keys.js';

export interface Ap2Spec {
  /** The open mandate presentation (`<jwt>~<d>~…~`), verbatim. */
  readonly mandate: string;
  /** The user's public key, the mandate's issuer. */
  readonly issuer: JWK;
  /** The audience every closed mandate's KB-JWT names. */
  readonly audience: string;
}

/** One earlier use of the mandate, as a ruling records it. */
interface Use { readonly use: number; readonly session: string; readonly index: number; readonly amount: number; readonly at: number }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const hex = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** The spec's ap2 member, checked for shape (the signature is checked at each turn, against that frame's time). */
export function readAp2Spec(spec: SessionSpec): MandateResult<Ap2Spec> {
  const a = spec[AP2_SPEC_KEY];
  if (!isObject(a) || Object.keys(a).length !== 3 || typeof a.mandate !== 'string' || typeof a.audience !== 'string' || a.audience === '') {
    return refuse('ap2-spec', 'spec.ap2 must be {mandate: "<jwt>~<d>~…~", issuer: <EC P-256 JWK>, audience: "<string>"}');
  }
  const split = splitCompact(a.mandate);
  if (!split.ok || split.value.kb !== '') return refuse('ap2-spec', 'spec.ap2.mandate is not an SD-JWT presentation without key binding');
  const issuer = publicP256(a.issuer);
  if (!issuer) return refuse('ap2-spec', 'spec.ap2.issuer is not a public EC P-256 JWK');
  return { ok: true, value: { mandate: a.mandate, issuer, audience: a.audience } };
}

function ruling(o: Record<string, CanonicalValue>): CanonicalObject {
  return { ap2: o as CanonicalObject };
}
const refused = (code: Ap2Code, message: string, extra: Record<string, CanonicalValue> = {}): RuleOutcome => ({ ruling: ruling({ admitted: false, code, message, ...extra }), nonces: [] });

/** The turn body: canonical JSON {checkout_jwt, open_checkout, payment}. */
function readTurn(bytes: Uint8Array): { checkoutJwt: string; openCheckout: string; payment: string } | undefined {
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

type Verified = { ok: true; m: OpenMandate; closed: ClosedMandate & { kind: 'payment' } } | { ok: false; outcome: RuleOutcome };

/** An AP2 session's turn: the open mandate at frame time `now`, then the closed payment mandate against it (§16.2, §16.3). */
async function ap2Payment(specIn: SessionSpec, authored: Uint8Array, now: number): Promise<Verified> {
  const spec = readAp2Spec(specIn);
  if (!spec.ok) return { ok: false, outcome: refused(spec.code, spec.message) };
  const open = await verifyOpenMandate(spec.value.mandate, { issuerKey: spec.value.issuer, now });
  if (!open.ok) return { ok: false, outcome: refused(open.code, open.message) };
  const m = open.value;
  if (m.kind !== 'payment') return { ok: false, outcome: refused('constraint-unsupported', 'sessions under an open checkout mandate are not ruled yet') };
  const turn = readTurn(authored);
  if (!turn) return { ok: false, outcome: refused('turn-malformed', 'an authored turn is canonical JSON {checkout_jwt, open_checkout, payment}') };
  const closed = await verifyClosedMandate(turn.payment, m, { now, aud: spec.value.audience, checkoutHashes: new Set([b64sha256(turn.checkoutJwt)]), openCheckoutHash: b64sha256(turn.openCheckout) });
  if (!closed.ok) return { ok: false, outcome: refused(closed.code, closed.message, { mandate: m.id }) };
  if (closed.value.kind !== 'payment') return { ok: false, outcome: refused('closed-vct', 'a payment session takes payment mandates') };
  return { ok: true, m, closed: closed.value };
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
  return { ok: true, m: cred.value, closed: closed.value };
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
    if (!isObject(a) || a['use'] !== n || typeof a['amount'] !== 'number' || typeof a['at'] !== 'number') {
      throw new TallyError('TALLY_AP2_HISTORY', 'A reservation of a mandate use names no spending turn.', { details: `${owner.sessionId}#${owner.index} use ${n}` });
    }
    return { use: n, session: owner.sessionId, index: owner.index, amount: a['amount'], at: a['at'] };
  }

  return {
    checkSpec(spec: SessionSpec): string | undefined {
      const s = spec[VI_SPEC_KEY] !== undefined && spec[AP2_SPEC_KEY] === undefined ? readViSpec(spec) : readAp2Spec(spec);
      return s.ok ? undefined : s.message;
    },

    recordedReservations(recorded: CanonicalObject): readonly RecordedReservation[] {
      const a = recorded['ap2'];
      if (!isObject(a) || typeof a['mandate'] !== 'string') return [];
      return recordedExternal(recorded).map((u) => ({ kind: 'ap2-use', agentId: `ap2:${a['mandate'] as string}`, nonce: `use:${u.use}`, owner: { intentHash: '', sessionId: u.session, index: u.index } }));
    },

    async rule(ctx: RuleContext): Promise<RuleOutcome> {
      const now = Math.floor(ctx.frameTime / 1000);
      const verified = ctx.spec[VI_SPEC_KEY] !== undefined ? await viPayment(ctx.spec, ctx.authored, now) : await ap2Payment(ctx.spec, ctx.authored, now);
      if (!verified.ok) return verified.outcome;
      const { m, closed } = verified;
      const key = `ap2:${m.id}`;
      const kbNonce = closed.claims['nonce'] as string;
      const base = { mandate: m.id, transaction_id: closed.transactionId, amount: closed.request.amount, currency: closed.request.currency, at: now };
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
      const facts = { spent_before: history.spent, uses_before: history.uses, external };
      const violations = evaluatePayment(m.constraints, closed.request, history, now);
      if (violations.length > 0) {
        return refused('constraint-violated', violations.map((v) => `${v.constraint}: ${v.reason}`).join('; '), { ...base, ...facts, violations: violations.map((v) => v.constraint) });
      }
      const intentHash = hex(ctx.authored);
      const nonces: NonceClaim[] = [
        { agentId: key, nonce: `use:${uses.length}`, intentHash },
        { agentId: key, nonce: `kb:${kbNonce}`, intentHash },
      ];
      return { ruling: ruling({ admitted: true, ...base, use: uses.length, ...facts }), nonces };
    },
  };
}
