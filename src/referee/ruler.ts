/**
 * The referee ruler: the intent ruler, then — when the session's spec seals a
 * mandate — the mechanical policy checks, the judge's signed verdict on the
 * semantic rules, and a ticket that reserves quota. The ruling of a turn is
 *
 * ```
 * { intent, policy?, verdict?, ticket?, transitions?, quota? }
 * ```
 *
 * where `transitions` are the outcomes of the ticket transitions the answered
 * frame carried and `quota` the figures after this turn. All state comes from
 * the transcript (see `RefereeHistory`); with `ctx.recorded` (replay) the
 * judge is never called: the recorded evidence is re-verified instead.
 */
import { canonicalPayload } from '../intent/canonical.js';
import type { Intent } from '../intent/schema.js';
import { createSignerCache, type SignerCache } from '../intent/signer-cache.js';
import { slotIndex, type CanonicalObject } from '../protocol/index.js';
import { TallyError } from '../protocol/errors.js';
import { intentOfAuthored, ruleIntent, type IntentRuling } from '../rules/intent.js';
import { checkIntentSpec } from '../rules/spec.js';
import type { RecordedReservation, RuleContext, RuleOutcome, TurnRuler } from '../session/types.js';
import type { NonceClaim } from '../store/types.js';
import { actionLine, contextText, judgeRequestBytes, sha256Hex, type JudgeRequestInput } from './bytes.js';
import { decAdd } from './decimal.js';
import { RefereeHistory, type EntrySource } from './history.js';
import { isModelId, type Judge, type JudgeAnswer, type JudgeFailure } from './judge.js';
import { judgedEvidence, readRecordedAnswer, settleAnswer, thrownAnswer, unavailableEvidence, type RecordedAnswerProblem, type SettledAnswer } from './evidence.js';
import { mandateOf, parseMandate, type Mandate } from './mandate.js';
import { checkPolicy } from './policy.js';
import { isLegacyLimited, rateSlots, recordedRateFacts, type RateLimitRuling } from './rate.js';
import { makeTicket, parseAnchoredIntent, quotaOf, type QuotaFigures, type RefereeFold, type TransitionOutcome } from './state.js';
import { cleanText } from './verdict.js';
import { checkGatewaySpec, isGatewaySpec, ruleToolTurn, ToolHistory } from './tool-ruler.js';
import { traceJudge } from '../telemetry/index.js';
import { askPanel, quorumOf, reverifyPanel, type Panel, type PanelAnswer } from './panel.js';
import type { JudgeEvidenceFields } from './ask-judges.js';

/** The `policy` member of a ruling. */
export type PolicyRuling =
  | { readonly admitted: true; readonly stage: 'policy'; readonly weight: string }
  | { readonly admitted: false; readonly stage: 'policy'; readonly code: string; readonly message: string };

/** The `verdict` member of a ruling: the judges' evidence (one copy of its members, ask-judges.ts) with how it was reached. */
export type VerdictRuling = JudgeEvidenceFields & {
  readonly stage: 'verdict';
  readonly admitted: boolean;
  readonly code?: string;
  readonly message: string;
  /** `judged`: asked now (evidence follows); `stored`: the verdict first given at ordinal `first`; `limited`: not asked (rate limit). */
  readonly source: 'judged' | 'stored' | 'limited';
  readonly first?: number;
  /** On `source: 'limited'`: the full window and who took its last slot. */
  readonly limit?: RateLimitRuling;
};

/** The `ticket` member of a ruling: the reservation an admission creates. */
export interface TicketRuling {
  readonly id: number;
  readonly state: 'ACTIVE';
  readonly weight: string;
  readonly expires_at: number;
  readonly proof_hash: string;
}

/** A referee ruling (see the module comment). */
export interface RefereeRuling {
  readonly intent?: IntentRuling;
  readonly policy?: PolicyRuling;
  readonly verdict?: VerdictRuling;
  readonly ticket?: TicketRuling;
  readonly transitions?: readonly TransitionOutcome[];
  readonly quota?: QuotaFigures;
}

/** Options of {@link createRefereeRuler}. */
export interface RefereeRulerOptions {
  /** The judge for mandates with rules; without one such intents are denied (`judge_unavailable`, `no_judge`). */
  readonly judge?: Judge;
  /** The store the engine writes to: the referee derives its state from the transcript there. */
  readonly store: EntrySource;
  /** Signer key cache shared with other rulers (default: a new one). */
  readonly signerCache?: SignerCache;
  /** Judge clients for mandates with a `panel` (matched to members by model and signer; default: `[judge]`). */
  readonly panel?: readonly Judge[];
  /** Each panel judge's own timeout in ms (default 20 000): a late judge counts as DENY for that turn. */
  readonly judgeTimeoutMs?: number;
  /**
   * Accept version-1 (unsigned) mandates, at `open` and when ruling: only a replay of a day
   * sealed before mandates were signed sets this (`replayRuler` does). Default false: a
   * live engine refuses to open them (`mandate_unsigned`) and rules `mandate_invalid` under one.
   */
  readonly legacyMandates?: boolean;
}

/** The referee ruler: a {@link TurnRuler} that can also rule on stand-down turns when the engine asks. */
export interface RefereeRuler extends TurnRuler {
  /** Rules on a stand-down turn (records the answered frame's transitions); engines that support it call it. */
  ruleStandDown(context: Omit<RuleContext, 'authored'>): Promise<RuleOutcome | undefined>;
  /** The folds this ruler derives its state from. */
  readonly history: RefereeHistory;
  /** The folds of gateway days (MCP tool calls). */
  readonly tools: ToolHistory;
}

const MESSAGE_MAX = 200;

/** The replay message for each way a recorded single-judge answer can be unreadable. */
const RECORDED_PROBLEM: Readonly<Record<RecordedAnswerProblem, string>> = {
  failure_malformed: 'the recorded judge failure is malformed',
  no_response: 'the recorded verdict lacks its response bytes or signature',
  signed_by: 'signed_by must be "operator" when present',
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function outcome(ruling: RefereeRuling, nonces: RuleOutcome['nonces'] = []): RuleOutcome {
  return { ruling: ruling as unknown as CanonicalObject, nonces };
}

/**
 * Checks a spec for the intent contract and the mandate, its principal's signature included
 * (`legacy`: also accept a version-1, unsigned mandate — replay only).
 */
export function checkRefereeSpec(spec: Parameters<NonNullable<TurnRuler['checkSpec']>>[0], options: { readonly legacy?: boolean } = {}): string | undefined {
  const intent = checkIntentSpec(spec);
  if (intent) return intent;
  const gateway = checkGatewaySpec(spec);
  if (gateway) return gateway;
  const m = parseMandate(spec, options);
  if (m.ok) return undefined;
  // Every problem at once, so a spec is mended in one round, not one open per problem.
  const all = m.problems ?? [m.problem];
  return all.length === 1 ? m.problem : `${all.length} problems in spec.mandate: ${all.join('; ')}`;
}

/**
 * Creates the referee ruler. Pass the engine's own store.
 *
 * @example
 * const store = new MemoryStore();
 * const engine = new Engine({ store, ruler: createRefereeRuler({ judge: createLocalJudge({ key }), store }) });
 */
export function createRefereeRuler(options: RefereeRulerOptions): RefereeRuler {
  if (!isObject(options) || !isObject(options.store) || typeof options.store.readRange !== 'function') {
    throw new TallyError('TALLY_REFEREE_OPTIONS', 'createRefereeRuler needs { store } (the engine store) to derive its state from the transcript.');
  }
  const judge = options.judge;
  if (judge !== undefined && (!isModelId(judge.model) || typeof judge.ask !== 'function')) throw new TallyError('TALLY_REFEREE_OPTIONS', 'judge must have a model id and an ask function.');
  const signerCache = options.signerCache ?? createSignerCache();
  const clients: readonly Judge[] = options.panel ?? (judge === undefined ? [] : [judge]);
  for (const c of clients) if (!isModelId(c.model) || typeof c.ask !== 'function') throw new TallyError('TALLY_REFEREE_OPTIONS', 'every panel judge must have a model id and an ask function.');
  const judgeTimeoutMs = options.judgeTimeoutMs ?? 20_000;
  if (!Number.isSafeInteger(judgeTimeoutMs) || judgeTimeoutMs < 1) throw new TallyError('TALLY_REFEREE_OPTIONS', 'judgeTimeoutMs must be a positive integer.');
  const legacy = { legacy: options.legacyMandates === true };
  const history = new RefereeHistory(options.store, 1024, legacy);
  const tools = new ToolHistory(options.store);

  async function foldBefore(ctx: Pick<RuleContext, 'sessionId' | 'ordinal'>): Promise<{ mandate: Mandate; fold: RefereeFold; transitions: readonly TransitionOutcome[] | undefined } | undefined> {
    const view = await history.fold(ctx.sessionId, slotIndex('frame', ctx.ordinal) + 1);
    if (!view) return undefined;
    const last = view.fold.lastFrame;
    if (!last || last.ordinal !== ctx.ordinal) throw new TallyError('TALLY_REFEREE_TRANSCRIPT', 'The store does not hold the frame being answered.', { details: `session ${ctx.sessionId} ordinal ${ctx.ordinal}` });
    return { mandate: view.mandate, fold: view.fold, transitions: last.outcomes };
  }

  /**
   * The verdict, and the claims the turn's append must still reserve: the
   * intent's nonce (`burned`) and, for a judge call, its rate slots. Before a
   * live judge call, the slots and the nonce are reserved in the store first
   * (`ctx.reserve`): a racing engine that finds one held is ruled again on
   * fresh state, so the judge is never asked beyond the slots, nor twice for
   * one intent; a call that then fails has still spent its slot.
   */
  async function verdictStage(ctx: RuleContext, m: Mandate, fold: RefereeFold, intent: Intent, ir: IntentRuling & { admitted: true }, burned: readonly NonceClaim[], context: unknown, hasContext: boolean): Promise<{ verdict: VerdictRuling; append: readonly NonceClaim[] }> {
    const intentHash = ir.intent_hash;
    const stored = fold.verdicts.get(intentHash);
    if (stored) {
      return { verdict: { stage: 'verdict', source: 'stored', first: stored.ordinal, admitted: stored.admitted, ...(stored.code === undefined ? {} : { code: stored.code }), message: stored.message }, append: burned };
    }
    // Per wallet: the signer the intent contract authenticated, not the name.
    const rate = await rateSlots(m, { agentId: intent.agent_id, signer: ir.signer }, ctx.frameTime, (key, token) => ctx.nonceOwner(key, token), isLegacyLimited(ctx.recorded));
    if (!rate.ok) return { verdict: rate.limited, append: burned };
    const claims = [...burned, ...rate.slots.map((c) => ({ ...c, intentHash }))];
    if (ctx.reserve === undefined || ctx.recorded !== undefined || (m.panel === undefined && judge === undefined)) {
      return { verdict: await judged(ctx, m, intent, intentHash, context, hasContext), append: claims };
    }
    await ctx.reserve(claims);
    return { verdict: await judged(ctx, m, intent, intentHash, context, hasContext), append: [] };
  }

  async function judged(ctx: RuleContext, m: Mandate, intent: Intent, intentHash: string, context: unknown, hasContext: boolean): Promise<VerdictRuling> {
    const base = {
      rules: m.rules,
      action: actionLine({ instance: m.instance, session: ctx.sessionId, action: intent.action, market: intent.action === 'transfer' ? undefined : intent.market, size: intent.size, intentHash }),
      intent: JSON.parse(canonicalPayload(intent)) as CanonicalObject,
      context: hasContext ? contextText(context) : undefined,
      ...(m.judgeRequest === 'verdict' ? {} : { format: m.judgeRequest }),
    };
    if (m.panel) return panelVerdict(ctx, m, m.panel, base);
    const request = (model: string): JudgeRequestInput => ({ model, ...base });
    const unavailable = (model: string, requestSha256: string, failure: JudgeFailure, message: string): VerdictRuling => ({
      stage: 'verdict',
      source: 'judged',
      ...unavailableEvidence(failure, message),
      model,
      request_sha256: requestSha256,
    });
    const recorded = (model: string, requestSha256: string, a: SettledAnswer): VerdictRuling => {
      if (!a.ok) return unavailable(model, requestSha256, a.failure, a.message);
      const e = judgedEvidence({ model, requestSha256, response: a.response, signature: a.signature, trusted: m.judges, action: base.action, ruleCount: m.rules.length, operatorSigned: a.operator, independent: m.judgesIndependent, ...(m.answerShape === undefined ? {} : { shape: m.answerShape }) });
      return { stage: 'verdict', source: 'judged', ...e.outcome, model, request_sha256: requestSha256, ...e.proof };
    };

    if (ctx.recorded !== undefined) {
      // Replay: never ask; re-verify the recorded evidence against the rebuilt request.
      const ev = ctx.recorded['verdict'];
      const invalid = (message: string): VerdictRuling => ({ stage: 'verdict', source: 'judged', admitted: false, code: 'judge_evidence_invalid', message });
      if (!isObject(ev) || ev['source'] !== 'judged' || !isModelId(ev['model']) || typeof ev['request_sha256'] !== 'string') return invalid('the recorded ruling holds no judged verdict for this proposal');
      const model = ev['model'];
      const requestSha256 = sha256Hex(judgeRequestBytes(request(model)));
      if (ev['request_sha256'] !== requestSha256) return invalid('the recorded verdict answers another request');
      const a = readRecordedAnswer(ev);
      if (a.ok === 'invalid') return invalid(RECORDED_PROBLEM[a.problem]);
      return recorded(model, requestSha256, a);
    }

    if (!judge) {
      return unavailable('-', sha256Hex(judgeRequestBytes(request('-'))), 'no_judge', 'the referee has no judge configured');
    }
    const req = request(judge.model);
    const requestBytes = judgeRequestBytes(req);
    const requestSha256 = sha256Hex(requestBytes);
    let answer: JudgeAnswer;
    try {
      answer = await traceJudge(judge.model, () => judge.ask({ request: req, requestBytes }));
    } catch (e) {
      answer = thrownAnswer(e);
    }
    return recorded(judge.model, requestSha256, settleAnswer(answer, judge.signedBy === 'operator'));
  }

  /** A panel's verdict: every judge asked (or, on replay, every recorded answer re-verified), then the k-of-n rule. */
  async function panelVerdict(ctx: RuleContext, m: Mandate, panel: Panel, base: Omit<JudgeRequestInput, 'model'>): Promise<VerdictRuling> {
    let answers: PanelAnswer[] | string;
    if (ctx.recorded !== undefined) {
      const ev = ctx.recorded['verdict'];
      answers = isObject(ev) && ev['source'] === 'judged' ? reverifyPanel(panel, base, ev['panel'], m.rules.length) : 'the recorded ruling holds no judged panel verdict for this proposal';
    } else {
      answers = await askPanel(panel, base, clients, judgeTimeoutMs, m.rules.length);
    }
    if (typeof answers === 'string') return { stage: 'verdict', source: 'judged', admitted: false, code: 'judge_evidence_invalid', message: answers };
    const q = quorumOf(panel, answers);
    return { stage: 'verdict', source: 'judged', admitted: q.admitted, ...(q.admitted ? {} : { code: 'judge_quorum_not_met' }), message: cleanText(Array.from(q.message).slice(0, 2 * MESSAGE_MAX).join('')), quorum: q.figures, panel: answers };
  }

  async function rule(ctx: RuleContext): Promise<RuleOutcome | undefined> {
    // A gateway day's turns are MCP tool calls (docs/PROTOCOL.md §18), never intents.
    if (isGatewaySpec(ctx.spec)) return ruleToolTurn(ctx, tools, legacy, { clients, timeoutMs: judgeTimeoutMs });
    const sealed = mandateOf(ctx.spec, legacy);
    const carried = ctx.spec['agents'] === undefined ? undefined : intentOfAuthored(ctx.authored);
    if (sealed.kind !== 'mandate') {
      if (!carried) return undefined;
      const r = await ruleIntent(ctx, carried.intent, signerCache);
      const burned = r.nonce ? [r.nonce] : [];
      if (sealed.kind === 'none' || !r.ruling.admitted) return outcome({ intent: r.ruling }, burned);
      return outcome({ intent: r.ruling, policy: { admitted: false, stage: 'policy', code: 'mandate_invalid', message: cleanText(Array.from(sealed.problem).slice(0, MESSAGE_MAX).join('')) } }, burned);
    }
    const before = await foldBefore(ctx);
    if (!before) return undefined;
    const { mandate: m, fold, transitions } = before;
    const extra = transitions === undefined ? {} : { transitions };
    if (!carried) return transitions === undefined ? undefined : outcome({ ...extra, quota: quotaOf(m, fold) });
    const r = await ruleIntent(ctx, carried.intent, signerCache);
    const ir = r.ruling;
    if (!ir.admitted) return outcome({ intent: ir, ...extra, quota: quotaOf(m, fold) });
    // The intent contract authenticated it: from here every refusal (policy or
    // verdict) consumes its nonce too (seed 003: a DENIED intent burns its nonce).
    const burned = r.nonce ? [r.nonce] : [];
    const reserved: NonceClaim[] = [...burned];
    const intent = parseAnchoredIntent(carried.intent);
    if (!intent) throw new TallyError('TALLY_REFEREE_INTERNAL', 'An admitted intent did not parse again.');
    const p = checkPolicy(m, fold, intent, ctx.frameTime);
    if (!p.ok) return outcome({ intent: ir, policy: { admitted: false, stage: 'policy', code: p.code, message: p.message }, ...extra, quota: quotaOf(m, fold) }, burned);
    const policy: PolicyRuling = { admitted: true, stage: 'policy', weight: p.weight };
    // Everything read from the fold is taken before the judge is awaited.
    const ticket = makeTicket(m, ctx.sessionId, fold, intent, ir.intent_hash, ctx.ordinal, ctx.frameTime);
    const now = quotaOf(m, fold);
    const after = quotaOf(m, { used: fold.used, locked: decAdd(fold.locked, ticket.weight), usedTxs: fold.usedTxs, lockedTxs: fold.lockedTxs + 1 });
    let verdict: VerdictRuling | undefined;
    if (m.rules.length > 0) {
      const v = await verdictStage(ctx, m, fold, intent, ir, burned, carried.context, carried.context !== undefined);
      verdict = v.verdict;
      reserved.splice(0, reserved.length, ...v.append);
      if (!verdict.admitted) return outcome({ intent: ir, policy, verdict, ...extra, quota: now }, reserved);
    }
    const t: TicketRuling = { id: ticket.id, state: 'ACTIVE', weight: ticket.weight, expires_at: ticket.expiresAt, proof_hash: ticket.proofHash };
    return outcome({ intent: ir, policy, ...(verdict === undefined ? {} : { verdict }), ticket: t, ...extra, quota: after }, reserved);
  }

  return {
    history,
    tools,
    checkSpec: (spec) => checkRefereeSpec(spec, legacy),
    rule,
    recordedReservations(recorded: CanonicalObject): readonly RecordedReservation[] {
      return recordedRateFacts(recorded);
    },
    appended(sessionId, spec, index, hash, entry, authored) {
      // A gateway day's fold takes the engine's new entries from its hand (ToolHistory.offer).
      if (isGatewaySpec(spec)) tools.offer(sessionId, index, hash, entry, authored);
    },
    async ruleStandDown(ctx) {
      if (isGatewaySpec(ctx.spec)) return undefined;
      if (mandateOf(ctx.spec, legacy).kind !== 'mandate') return undefined;
      const before = await foldBefore(ctx);
      if (!before || before.transitions === undefined) return undefined;
      return outcome({ transitions: before.transitions, quota: quotaOf(before.mandate, before.fold) });
    },
  };
}
