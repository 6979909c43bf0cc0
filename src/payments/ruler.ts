/**
 * The payment referee: rules on x402 payment turns before any money moves, offline and
 * deterministically from the transcript (the answered frame's time and offers, the session's
 * sealed policy and signer registry, the store's nonce reservations), and records the settlement
 * facts each frame brings. Every other turn goes to the inner ruler (the referee's, by default
 * none), and its ruling is kept: a turn's ruling is `{…inner ruling, x402: {payment?,
 * settlements?, budgets?}}`.
 */
import { slotIndex, type CanonicalObject } from '../protocol/index.js';
import { signerOf } from '../rules/spec.js';
import type { EntrySource } from '../referee/history.js';
import type { RecordedReservation, RuleContext, RuleOutcome, TurnRuler } from '../session/types.js';
import type { NonceClaim } from '../store/types.js';
import { paymentHash, paymentIdKey, paymentNonceKey } from './bytes.js';
import type { PaymentRefusalCode } from './codes.js';
import { authorizationDigest, recoverAuthorizer } from './eip712.js';
import { budgetsOf, type BudgetFigures, type PaymentsFold, type SettlementOutcome } from './fold.js';
import { PaymentsHistory } from './history.js';
import { offersOf, parsePaymentTurn, type PaymentTurn } from './payload.js';
import { paymentPolicyOf, type PaymentPolicy } from './spec.js';
import { askPaymentJudges, paymentJudgeRequest, reverifyPaymentJudges, type PaymentVerdict } from './judges.js';
import { mandateOf } from '../referee/mandate.js';
import type { JudgeRequestInput } from '../referee/bytes.js';
import type { Judge } from '../referee/judge.js';
import { TallyError } from '../protocol/errors.js';

/** The `x402.payment` member of a ruling. */
export type PaymentRuling =
  | {
      readonly admitted: true;
      readonly payment_hash: string;
      readonly agent_id: string;
      readonly payer: string;
      readonly pay_to: string;
      readonly network: string;
      readonly asset: string;
      readonly value: string;
      readonly nonce: string;
      readonly valid_after: string;
      readonly valid_before: string;
      /** The EIP-712 digest the payer signed, 0x-hex. */
      readonly digest: string;
      readonly ticket: number;
      readonly state: 'RESERVED';
      readonly retry_of?: number;
      /** When the policy names judges: their verdict, with every judge's signed answer (§17.10). */
      readonly verdict?: PaymentVerdict;
    }
  | {
      readonly admitted: false;
      readonly code: PaymentRefusalCode;
      readonly message: string;
      readonly payment_hash?: string;
      /** On `duplicate_execution` and `payment_id_conflict`: the reservation's key and who holds it. */
      readonly first?: { readonly key: string; readonly nonce: string; readonly payment_hash: string; readonly session: string; readonly index: number };
      /** On a judge code: the judges' verdict, with every judge's signed answer (§17.10). */
      readonly verdict?: PaymentVerdict;
    };

/** The `x402` member of a ruling. */
export interface PaymentsRuling {
  readonly payment?: PaymentRuling;
  readonly settlements?: readonly SettlementOutcome[];
  readonly budgets?: readonly BudgetFigures[];
}

export interface PaymentsRulerOptions {
  /** The engine's store: the payments are folded from the transcript there. */
  readonly store: EntrySource;
  /** Rules every turn that is not a payment (and adds its stand-down ruling to payment turns). */
  readonly inner?: TurnRuler;
  /** The judge of a payment policy that names `judges` (without one, such payments are refused `judge_unavailable`, `no_judge`). */
  readonly judge?: Judge;
  /** Judge clients for a payment policy with a `panel` (matched to members by model and signer; default `[judge]`). */
  readonly panel?: readonly Judge[];
  /** Each judge's own timeout in ms (default 20 000): a late judge counts as DENY for that payment. */
  readonly judgeTimeoutMs?: number;
}

/**
 * How a payment's judges are consulted: asked (live), or their recorded verdict re-verified
 * (replay, evidence). Called only for a payment every mechanical check admits.
 */
export type PaymentJudges = (request: Omit<JudgeRequestInput, 'model'>) => Promise<PaymentVerdict> | PaymentVerdict;

export interface PaymentsRuler extends TurnRuler {
  readonly history: PaymentsHistory;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const MESSAGE_MAX = 200;

/** The `x402.payment.verdict` member of a recorded ruling, if any. */
export function recordedVerdictOf(recorded: unknown): unknown {
  const x = isObject(recorded) ? recorded['x402'] : undefined;
  const p = isObject(x) ? x['payment'] : undefined;
  return isObject(p) ? p['verdict'] : undefined;
}
const clip = (s: string): string => Array.from(s).slice(0, MESSAGE_MAX).join('');

/**
 * Rules one payment turn against the policy, the answered frame and the fold (pure but for the
 * nonce lookup). Returns the ruling and the nonce claim an admission reserves with the turn.
 */
export async function rulePayment(
  ctx: Pick<RuleContext, 'spec' | 'frameTime' | 'nonceOwner'> & { readonly sessionId?: string },
  policy: PaymentPolicy,
  fold: PaymentsFold,
  frameData: unknown,
  t: PaymentTurn,
  judges?: PaymentJudges,
): Promise<{ ruling: PaymentRuling; claims?: readonly NonceClaim[] }> {
  const hash = paymentHash(t.payload);
  const no = (code: PaymentRefusalCode, message: string): { ruling: PaymentRuling } => ({ ruling: { admitted: false, code, message: clip(message), payment_hash: hash } });
  const signer = signerOf(ctx.spec, t.agentId);
  if (signer === null) return no('unknown_agent', `agent ${t.agentId} is not registered in this session`);
  const offer = offersOf(frameData).find((o) => o.id === t.offer);
  if (!offer) return no('offer_drift', `the answered frame offered nothing under id ${t.offer}`);
  if (!offer.accepts.includes(t.acceptedJson)) return no('offer_drift', `payload.accepted is not byte for byte one of offer ${t.offer}'s requirements`);
  const a = t.authorization;
  const digest = authorizationDigest(t.domain, a);
  const recovered = recoverAuthorizer(digest, t.signature);
  if (recovered === null || recovered !== a.from.toLowerCase()) return no('signature_invalid', `the EIP-712 signature does not recover to authorization.from ${a.from}`);
  if (recovered !== signer.toLowerCase()) return no('payer_not_signer', `authorization.from ${a.from} is not agent ${t.agentId}'s registered signer`);
  const network = t.accepted.network;
  const asset = t.accepted.asset.toLowerCase();
  if (!policy.assets.some((x) => x.network === network)) return no('network_not_allowed', `network ${network} is not allowed`);
  const allowed = policy.assets.find((x) => x.network === network && x.asset === asset);
  if (!allowed) return no('asset_not_allowed', `asset ${asset} is not allowed on ${network}`);
  const to = a.to.toLowerCase();
  if (to !== t.accepted.payTo.toLowerCase()) return no('counterparty_mismatch', `authorization.to ${a.to} is not the offered payTo ${t.accepted.payTo}`);
  if (!policy.payees.includes(to)) return no('payee_not_allowed', `payee ${to} is not on the allowlist`);
  if (t.accepted.amount !== a.value.toString()) return no('amount_mismatch', `authorization.value ${a.value} is not the offered amount ${t.accepted.amount}`);
  if (a.value > allowed.perPaymentCap) return no('over_payment_cap', `value ${a.value} exceeds the per-payment cap ${allowed.perPaymentCap} (10^-${allowed.decimals} units)`);
  const [b] = budgetsOf(fold, [allowed]);
  if (a.value > BigInt(b!.free)) return no('over_budget', `used ${b!.used} + locked ${b!.locked} + ${a.value} > budget ${b!.budget}`);
  const now = BigInt(Math.floor(ctx.frameTime / 1000));
  if (a.validAfter >= now) return no('not_yet_valid', `validAfter ${a.validAfter} is not before the frame time ${now} s`);
  if (a.validBefore <= now) return no('expired', `validBefore ${a.validBefore} is not after the frame time ${now} s`);
  if (t.retryOf !== undefined) {
    const first = fold.tickets[t.retryOf - 1];
    if (!first || first.acceptedJson !== t.acceptedJson || first.payer !== recovered) return no('retry_not_allowed', `retry_of ${t.retryOf} names no earlier payment of this requirement by this payer`);
    if (first.state === 'UNKNOWN' || first.state === 'RESERVED') return no('settlement_unknown', `payment ticket ${first.id} is ${first.state}: its settlement may still land, so it cannot be retried`);
    if (first.state !== 'FAILED') return no('retry_not_allowed', `payment ticket ${first.id} is ${first.state}`);
  }
  const idKey = paymentIdKey(recovered);
  if (t.paymentId !== undefined) {
    const held = await ctx.nonceOwner(idKey, t.paymentId);
    if (held && held.intentHash !== hash) {
      return { ruling: { admitted: false, code: 'payment_id_conflict', message: `payment id ${t.paymentId} was admitted for another payload`, payment_hash: hash, first: { key: idKey, nonce: t.paymentId, payment_hash: held.intentHash, session: held.sessionId, index: held.index } } };
    }
  }
  const key = paymentNonceKey(network, asset, recovered);
  const nonce = a.nonce.toLowerCase();
  const owner = await ctx.nonceOwner(key, nonce);
  if (owner) {
    return { ruling: { admitted: false, code: 'duplicate_execution', message: `nonce ${nonce} of ${recovered} on ${asset} was already admitted`, payment_hash: hash, first: { key, nonce, payment_hash: owner.intentHash, session: owner.sessionId, index: owner.index } } };
  }
  let verdict: PaymentVerdict | undefined;
  if (policy.judging !== undefined) {
    if (judges === undefined || ctx.sessionId === undefined) throw new TallyError('TALLY_PAYMENTS_INTERNAL', 'a payment policy with judges is ruled only with its judges and its session id');
    const m = mandateOf(ctx.spec);
    const resource = isObject(t.payload['resource']) && typeof t.payload['resource']['url'] === 'string' ? t.payload['resource']['url'] : undefined;
    const request = paymentJudgeRequest(policy.judging, {
      instance: m.kind === 'mandate' ? m.mandate.instance : '-',
      session: ctx.sessionId, paymentHash: hash, agentId: t.agentId, payer: recovered, payTo: to, network, asset, value: a.value.toString(), nonce, validAfter: a.validAfter.toString(), validBefore: a.validBefore.toString(), resource,
    });
    verdict = await judges(request);
    if (!verdict.admitted) return { ruling: { admitted: false, code: verdict.code ?? 'judge_denied', message: clip(verdict.message), payment_hash: hash, verdict } };
  }
  return {
    ruling: {
      admitted: true,
      payment_hash: hash,
      agent_id: t.agentId,
      payer: recovered,
      pay_to: to,
      network,
      asset,
      value: a.value.toString(),
      nonce,
      valid_after: a.validAfter.toString(),
      valid_before: a.validBefore.toString(),
      digest,
      ticket: fold.tickets.length + 1,
      state: 'RESERVED',
      ...(t.retryOf === undefined ? {} : { retry_of: t.retryOf }),
      ...(verdict === undefined ? {} : { verdict }),
    },
    claims: [{ agentId: key, nonce, intentHash: hash }, ...(t.paymentId === undefined ? [] : [{ agentId: idKey, nonce: t.paymentId, intentHash: hash }])],
  };
}

/**
 * Creates the payment referee. Pass the engine's own store, and the ruler of every other turn.
 *
 * @example
 * const store = new MemoryStore();
 * const inner = createRefereeRuler({ store });
 * const engine = new Engine({ store, ruler: createPaymentsRuler({ store, inner }) });
 */
export function createPaymentsRuler(options: PaymentsRulerOptions): PaymentsRuler {
  const history = new PaymentsHistory(options.store);
  const inner = options.inner;
  const clients: readonly Judge[] = options.panel ?? (options.judge === undefined ? [] : [options.judge]);
  const judgeTimeoutMs = options.judgeTimeoutMs ?? 20_000;
  if (!Number.isSafeInteger(judgeTimeoutMs) || judgeTimeoutMs < 1) throw new TallyError('TALLY_PAYMENTS_OPTIONS', 'judgeTimeoutMs must be a positive integer.');

  /** Live: ask the judges; replay (`recorded`): re-verify the verdict the day recorded. */
  function judgesFor(policy: PaymentPolicy, recorded: CanonicalObject | undefined): PaymentJudges | undefined {
    const j = policy.judging;
    if (j === undefined) return undefined;
    if (recorded === undefined) return (request) => askPaymentJudges(j, request, clients, judgeTimeoutMs);
    return (request) => reverifyPaymentJudges(j, request, recordedVerdictOf(recorded));
  }

  async function before(ctx: Pick<RuleContext, 'sessionId' | 'ordinal'>): Promise<PaymentsFold> {
    const fold = await history.fold(ctx.sessionId, slotIndex('frame', ctx.ordinal) + 1);
    if (fold.lastFrame?.ordinal !== ctx.ordinal) throw new Error(`the store does not hold frame ${ctx.ordinal} of ${ctx.sessionId}`);
    return fold;
  }

  function merge(base: RuleOutcome | undefined, x402: PaymentsRuling | undefined, claims: readonly NonceClaim[] = []): RuleOutcome | undefined {
    if (x402 === undefined) return base;
    return { ruling: { ...(base?.ruling ?? {}), x402: x402 as unknown as CanonicalObject }, nonces: [...(base?.nonces ?? []), ...claims] };
  }

  function frameFacts(policy: PaymentPolicy, fold: PaymentsFold): PaymentsRuling | undefined {
    const s = fold.lastFrame?.outcomes;
    return s === undefined ? undefined : { settlements: s, budgets: budgetsOf(fold, policy.assets) };
  }

  return {
    history,
    checkSpec(spec) {
      const p = paymentPolicyOf(spec);
      if (!p.ok) return p.problem;
      return inner?.checkSpec?.(spec);
    },
    async rule(ctx) {
      const p = paymentPolicyOf(ctx.spec);
      const parsed = p.ok && p.policy ? parsePaymentTurn(ctx.authored) : undefined;
      if (!p.ok || !p.policy) return inner?.rule(ctx);
      const policy = p.policy;
      const fold = await before(ctx);
      if (parsed === undefined) return merge(await inner?.rule(ctx), frameFacts(policy, fold));
      const facts = frameFacts(policy, fold);
      // The inner ruler's stand-down ruling records only what a frame's `referee` member carries (the referee's transitions):
      // asked only when there is one, so a payment turn does not pay for the referee's fold (it catches up on its next turn).
      const data = fold.lastFrame!.data;
      const side = isObject(data) && Object.hasOwn(data, 'referee') ? await inner?.ruleStandDown?.(ctx) : undefined;
      if (!parsed.ok) {
        const payment: PaymentRuling = { admitted: false, code: parsed.code, message: clip(parsed.message), ...(parsed.payload ? { payment_hash: paymentHash(parsed.payload) } : {}) };
        return merge(side, { payment, ...(facts ?? {}), budgets: budgetsOf(fold, policy.assets) });
      }
      const r = await rulePayment(ctx, policy, fold, fold.lastFrame!.data, parsed.turn, judgesFor(policy, ctx.recorded));
      const budgets = budgetsOf(fold, policy.assets).map((b) =>
        r.ruling.admitted && b.network === r.ruling.network && b.asset === r.ruling.asset
          ? { ...b, locked: (BigInt(b.locked) + BigInt(r.ruling.value)).toString(), free: (BigInt(b.free) - BigInt(r.ruling.value)).toString() }
          : b,
      );
      return merge(side, { payment: r.ruling, ...(facts?.settlements ? { settlements: facts.settlements } : {}), budgets }, r.claims ?? []);
    },
    async ruleStandDown(ctx) {
      const p = paymentPolicyOf(ctx.spec);
      const side = await inner?.ruleStandDown?.(ctx);
      if (!p.ok || !p.policy) return side;
      return merge(side, frameFacts(p.policy, await before(ctx)));
    },
    recordedReservations(recorded, sessionId): readonly RecordedReservation[] {
      const own = inner?.recordedReservations?.(recorded, sessionId) ?? [];
      const x = recorded['x402'];
      const f = isObject(x) && isObject(x['payment']) ? x['payment']['first'] : undefined;
      if (!isObject(f) || typeof f['key'] !== 'string' || typeof f['nonce'] !== 'string' || typeof f['payment_hash'] !== 'string' || typeof f['session'] !== 'string' || typeof f['index'] !== 'number') return own;
      return [...own, { kind: 'x402-nonce', agentId: f['key'], nonce: f['nonce'], owner: { intentHash: f['payment_hash'], sessionId: f['session'], index: f['index'] } }];
    },
  };
}
