/**
 * The mandate: what the owner of the money allows, sealed in genesis as
 * `spec.mandate`. Checked at `open` (through the ruler's `checkSpec`) as
 * strictly as the seed contract: bounded lists and texts, caps in range,
 * decimal figures as canonical decimal strings, no zero addresses.
 *
 * A version-2 mandate (`"version": 2`) is signed by its principal
 * (`signature`, see `mandate-sig.ts`); a mandate without `version` is version 1,
 * sealed before mandates were signed: only a replay accepts it (option
 * `legacy`), with the judge request, answer reading and ticket expiry it was
 * ruled with.
 *
 * ```json
 * "mandate": {
 *   "version": 2,
 *   "instance": "desk-7/prod",
 *   "principal": "0x…", "operator": "0x…", "executor": "0x…",
 *   "actions": ["open", "close"], "markets": ["BTC-PERP"],
 *   "caps": { "size": "2", "leverage": "5", "slippage": "0.01" },
 *   "quota": { "cap": "10", "weights": { "close": "0" } },
 *   "tx_cap": 20, "starts_at": 1893456000000, "expires_at": 1893459600000, "ticket_ttl_ms": 3600000,
 *   "rules": ["Only trade with the trend described in the context."],
 *   "judges": ["0x…"], "judge_rate": { "max": 30, "window_ms": 3600000, "daily_max": 10000 },
 *   "signature": { "scheme": "eip712", "value": "0x…" }
 * }
 * ```
 */
import type { IntentAction } from '../intent/schema.js';
import type { SessionSpec } from '../protocol/index.js';
import { address, attempt, exactKeys, fail, intIn, isObject, MANDATE_LIMITS, Problem, withoutFollowOns } from './mandate-checks.js';

export { MANDATE_LIMITS } from './mandate-checks.js';
import { judgingOf } from './judging.js';
import { checkMandateSignature, MANDATE_VERSION } from './mandate-sig.js';
import type { Panel } from './panel.js';
import { parseToolPolicy, ToolPolicyProblem, type ToolPolicy } from './tools.js';


/** Judge rate limit: at most `max` judge calls per agent (across every session of the store) per window of `window_ms` frame time. */
export const DEFAULT_JUDGE_RATE = Object.freeze({ max: 30, window_ms: 3_600_000 });
export { DEFAULT_TICKET_TTL_MS } from './mandate-trading.js';
import { TOOL_ONLY_TRADING, TRADING_MEMBERS, tradingMembers } from './mandate-trading.js';

/** A checked mandate (addresses lowercased, defaults filled in). */
export interface Mandate {
  /** 2: signed by its principal, ruled by the current rules; 1: sealed before (replay only), ruled as it was. */
  readonly version: 1 | 2;
  /** The spec's `intent.clockSkewMs` (default 0): an intent — and the ticket it gets — lives until `ttl + skew` inclusive (version 2). */
  readonly intentSkewMs: number;
  readonly instance: string;
  readonly principal: string;
  readonly operator: string;
  readonly executor: string;
  readonly actions: readonly IntentAction[];
  readonly markets: readonly string[];
  /** Allowed transfer targets (lowercase); `undefined` = any. */
  readonly targets: readonly string[] | undefined;
  readonly caps: { readonly size: string; readonly leverage: string; readonly slippage: string };
  readonly quotaCap: string;
  /** Quota weight multiplier per action (default `"1"`): weight = size × multiplier. */
  readonly weights: Readonly<Record<IntentAction, string>>;
  readonly txCap: number;
  /** Frame time from which the mandate is in force (its registration). */
  readonly startsAt: number;
  readonly expiresAt: number;
  readonly ticketTtlMs: number;
  readonly rules: readonly string[];
  /** Trusted judge signers (lowercase); for a panel, its members' signers. */
  readonly judges: readonly string[];
  /** Independent judges in quorum (`undefined`: one judge, any signer in `judges`). */
  readonly panel: Panel | undefined;
  /** Per-agent limit across sessions, and the optional daily cap across every agent (`undefined` = none). */
  readonly judgeRate: { readonly max: number; readonly windowMs: number; readonly dailyMax: number | undefined };
  /**
   * The request sent to judges, and so the one answer shape accepted (version 2):
   * `verdict-v2` — seed 002's request (amount, thinking off), a verdict answer — is the
   * default of version 2; `verdict` the version-1 request (replay only); `assessment` seed 003's.
   */
  readonly judgeRequest: 'verdict' | 'verdict-v2' | 'assessment';
  /** `true`: an answer labelled `signed_by: "operator"` does not count (judges must hold their own keys). */
  readonly judgesIndependent: boolean;
  /** The one answer shape accepted (version 2: the shape the request asks for); `undefined`: either (version 1). */
  readonly answerShape: 'verdict' | 'matrix' | undefined;
  /** The MCP tools the gateway may pass upstream (docs/PROTOCOL.md §18.3); absent: no tool is allowed. */
  readonly tools?: ToolPolicy;
  /** A tool-only mandate (§18.7: `tools`, no `actions` nor any trading member): it governs a gateway day only. */
  readonly toolOnly: boolean;
}

/** Result of {@link parseMandate}. */
export type ParseMandateResult =
  | { readonly ok: true; readonly mandate: Mandate | undefined }
  | {
      readonly ok: false;
      readonly code: 'mandate_invalid' | 'mandate_unsigned' | 'mandate_bad_signature';
      /** The first problem (what a ruling under a sealed invalid mandate quotes). */
      readonly problem: string;
      /** Every problem one pass found (mandate_invalid), the first being `problem`. */
      readonly problems?: readonly string[];
    };

/** Options of {@link parseMandate}. */
export interface ParseMandateOptions {
  /** Accept a version-1 (unsigned) mandate: only the replay of a day sealed before signed mandates does (default false). */
  readonly legacy?: boolean;
}

const INSTANCE = /^[A-Za-z0-9._:/-]+$/;
const KEYS = ['version', 'signature', 'instance', 'principal', 'operator', 'executor', 'actions', 'markets', 'targets', 'caps', 'quota', 'tx_cap', 'starts_at', 'expires_at', 'ticket_ttl_ms', 'rules', 'judges', 'panel', 'judge_rate', 'judge_request', 'judges_independent', 'tools'];
const REQUIRED = ['instance', 'principal', 'operator', 'executor', 'actions', 'caps', 'quota', 'tx_cap', 'starts_at', 'expires_at'];
const TOOL_ONLY_REQUIRED = ['instance', 'principal', 'starts_at', 'expires_at', 'tools'];

function build(m: unknown): Mandate {
  if (!isObject(m)) fail('spec.mandate must be an object');
  const o = m as Record<string, unknown>;
  const problems: string[] = [];
  const w = 'spec.mandate';
  // A tool-only mandate (§18.7): tools and no actions; it has none of the trading members.
  const toolOnly = o['version'] === MANDATE_VERSION && o['tools'] !== undefined && o['actions'] === undefined;
  attempt(problems, () => exactKeys(o, 'spec.mandate', KEYS, toolOnly ? TOOL_ONLY_REQUIRED : REQUIRED));
  if (toolOnly) for (const k of TRADING_MEMBERS) attempt(problems, () => o[k] !== undefined && fail(`${w}.${k} governs intents: a tool-only mandate (tools without actions, docs/PROTOCOL.md §18.7) has no ${k}`));
  if (o['version'] !== undefined && o['version'] !== MANDATE_VERSION) {
    // Every later check depends on the version: stop here, with what was found before.
    problems.push(`${w}.version must be ${MANDATE_VERSION} (a mandate without version is version 1: sealed before mandates were signed, replay only)`);
    throw new Problem(problems[0]!, problems);
  }
  const version = o['version'] === undefined ? 1 : 2;
  attempt(problems, () => {
    if (version === 1 && o['signature'] !== undefined) fail(`${w}.signature needs ${w}.version ${MANDATE_VERSION} (a version-1 mandate is unsigned)`);
  });
  const instance = o['instance'];
  attempt(problems, () => {
    if (typeof instance !== 'string' || instance.length === 0 || instance.length > MANDATE_LIMITS.instanceLength || !INSTANCE.test(instance)) {
      fail(`${w}.instance must be 1–${MANDATE_LIMITS.instanceLength} characters of letters, digits and . _ : / -`);
    }
  });
  const principal = attempt(problems, () => address(o['principal'], `${w}.principal`));
  const trading = toolOnly ? TOOL_ONLY_TRADING : tradingMembers(o, problems);
  const startsAt = attempt(problems, () => intIn(o['starts_at'], `${w}.starts_at`, 0, Number.MAX_SAFE_INTEGER));
  const expiresAt = attempt(problems, () => intIn(o['expires_at'], `${w}.expires_at`, 1, Number.MAX_SAFE_INTEGER));
  attempt(problems, () => {
    if (startsAt === undefined || expiresAt === undefined) return;
    const lifetime = expiresAt - startsAt;
    if (lifetime < MANDATE_LIMITS.minLifetimeMs || lifetime > MANDATE_LIMITS.maxLifetimeMs) {
      fail(`${w}: lifetime expires_at − starts_at = ${lifetime} ms must be from ${MANDATE_LIMITS.minLifetimeMs} ms (60 s) to ${MANDATE_LIMITS.maxLifetimeMs} ms (30 days)`);
    }
  });

  let judgeRate: Mandate['judgeRate'] | undefined;
  const judging = judgingOf(o, w, version, problems, () => {
    judgeRate = attempt(problems, () => {
      let judgeRate: Mandate['judgeRate'] = { max: DEFAULT_JUDGE_RATE.max, windowMs: DEFAULT_JUDGE_RATE.window_ms, dailyMax: undefined };
      if (o['judge_rate'] !== undefined) {
        const r = o['judge_rate'];
        if (!isObject(r)) fail(`${w}.judge_rate must be an object { max, window_ms, daily_max? }`);
        const rr = r as Record<string, unknown>;
        exactKeys(rr, `${w}.judge_rate`, ['max', 'window_ms', 'daily_max'], ['max', 'window_ms']);
        judgeRate = {
          max: intIn(rr['max'], `${w}.judge_rate.max`, 1, MANDATE_LIMITS.maxJudgeRate),
          windowMs: intIn(rr['window_ms'], `${w}.judge_rate.window_ms`, MANDATE_LIMITS.minJudgeWindowMs, MANDATE_LIMITS.maxJudgeWindowMs),
          dailyMax: rr['daily_max'] === undefined ? undefined : intIn(rr['daily_max'], `${w}.judge_rate.daily_max`, 1, MANDATE_LIMITS.maxJudgeDaily),
        };
      }
      return judgeRate;
    });
  });
  if (problems.length > 0) {
    const all = withoutFollowOns(problems);
    throw new Problem(all[0]!, all);
  }
  const { rules, judges, panel, judgeRequest, judgesIndependent, answerShape } = judging!;
  let tools: ToolPolicy | undefined;
  if (o['tools'] !== undefined) {
    if (version === 1) fail(`${w}.tools needs ${w}.version ${MANDATE_VERSION} (a signed mandate)`);
    try {
      tools = parseToolPolicy(o['tools']);
    } catch (e) {
      if (e instanceof ToolPolicyProblem) fail(e.message);
      throw e;
    }
  }
  return {
    ...(tools === undefined ? {} : { tools }),
    version,
    toolOnly,
    intentSkewMs: 0,
    instance: instance as string,
    principal: principal!,
    operator: trading.operator!,
    executor: trading.executor!,
    actions: trading.actions!,
    markets: trading.markets!,
    targets: trading.targets,
    caps: trading.caps!,
    quotaCap: trading.quotaParts!.quotaCap,
    weights: trading.quotaParts!.weights,
    txCap: trading.txCap!,
    startsAt: startsAt!,
    expiresAt: expiresAt!,
    ticketTtlMs: trading.ticketTtlMs!,
    rules,
    judges,
    panel,
    judgeRate: judgeRate!,
    judgeRequest: judgeRequest!,
    judgesIndependent: judgesIndependent!,
    answerShape,
  };
}

/**
 * Reads and checks `spec.mandate`; `mandate: undefined` when the spec has none.
 *
 * @example
 * const r = parseMandate(spec);
 * if (!r.ok) console.error(r.problem); // e.g. 'spec.mandate.caps.size must be greater than 0'
 */
export function parseMandate(spec: SessionSpec, options: ParseMandateOptions = {}): ParseMandateResult {
  if (spec['mandate'] === undefined) return { ok: true, mandate: undefined };
  let mandate: Mandate;
  try {
    mandate = build(spec['mandate']);
  } catch (e) {
    if (e instanceof Problem) return { ok: false, code: 'mandate_invalid', problem: e.text, problems: e.all };
    throw e;
  }
  if (mandate.toolOnly && spec['mcp'] === undefined) return { ok: false, code: 'mandate_invalid', problem: 'spec.mandate is tool-only (tools without actions): it governs a gateway day only, so the spec needs "mcp" (docs/PROTOCOL.md §18.7)' };
  if (spec['agents'] === undefined && !mandate.toolOnly) return { ok: false, code: 'mandate_invalid', problem: 'spec.mandate needs spec.agents (the signer registry of the agents it binds)' };
  if (mandate.version === 1) {
    if (options.legacy !== true) {
      return { ok: false, code: 'mandate_unsigned', problem: `mandate_unsigned: spec.mandate needs "version": ${MANDATE_VERSION} and its principal's signature (a version-1, unsigned mandate is accepted only when replaying a day sealed before mandates were signed)` };
    }
  } else {
    const sig = checkMandateSignature(spec);
    if (!sig.ok) return { ok: false, code: sig.code, problem: sig.problem };
  }
  const intent = spec['intent'];
  const skew = isObject(intent) && typeof intent['clockSkewMs'] === 'number' ? intent['clockSkewMs'] : 0;
  return { ok: true, mandate: { ...mandate, intentSkewMs: skew } };
}

/** The mandate of a sealed spec: none, a checked one, or an invalid one (which admits nothing). */
export type SealedMandate = { readonly kind: 'none' } | { readonly kind: 'mandate'; readonly mandate: Mandate } | { readonly kind: 'invalid'; readonly problem: string };

const caches = { live: new WeakMap<SessionSpec, SealedMandate>(), legacy: new WeakMap<SessionSpec, SealedMandate>() };

/**
 * The mandate of an already-sealed spec, memoized per spec object. A spec
 * sealed by an engine that did not check mandates may hold an invalid one
 * (or an unsigned or wrongly signed one): it is reported as `invalid` so the
 * referee fails closed.
 */
export function mandateOf(spec: SessionSpec, options: ParseMandateOptions = {}): SealedMandate {
  const cache = options.legacy === true ? caches.legacy : caches.live;
  const hit = cache.get(spec);
  if (hit) return hit;
  const r = parseMandate(spec, options);
  const m: SealedMandate = !r.ok ? { kind: 'invalid', problem: r.problem } : r.mandate === undefined ? { kind: 'none' } : { kind: 'mandate', mandate: r.mandate };
  cache.set(spec, m);
  return m;
}
