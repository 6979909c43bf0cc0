/**
 * Reading a judge's answer. The response bytes are an OpenAI-compatible chat
 * completion; its first choice's `message.content` MUST parse as exactly one of
 *
 * - the verdict `{"reason": ≤280 chars, "verdict": "ALLOW"|"DENY", "action": <the canonical action, echoed>}`;
 * - the seed's assessment matrix `{"assessments": [{"index", "outcome": "PASS"|"FAIL"|"AMBIGUOUS",
 *   "certainty": "solid"|"moderate"|"weak"}, …]}` — one entry per rule, strict key sets, no
 *   duplicate or out-of-range index; ALLOW only when every rule is PASS and solid.
 *
 * Both the response and the content are read by the one strict parser: a
 * duplicate key (`{"verdict":"DENY","verdict":"ALLOW",…}`), a lone surrogate,
 * a BOM or nesting past the limit is unparsable. The verdict's keys must come
 * in the seed's order: reason, verdict, action.
 *
 * Anything else is a DENY (`judge_unparsable`), never a silent ALLOW. The
 * signature is checked first: it must recover, over the verdict text, to a
 * signer the mandate trusts.
 */
import { parseStrictJson } from '../protocol/index.js';
import { sha256Hex, verdictMessage } from './bytes.js';
import { recoverText, verifyText } from './eip191.js';

/** Longest accepted `reason`, in Unicode code points. */
export const MAX_REASON_CODE_POINTS = 280;

/** A parsed answer. */
export type ParsedVerdict =
  | { readonly ok: true; readonly format: 'verdict'; readonly decision: 'ALLOW' | 'DENY'; readonly reason: string; readonly action: string }
  | { readonly ok: true; readonly format: 'matrix'; readonly decision: 'ALLOW' | 'DENY'; readonly reason: string }
  | { readonly ok: false; readonly message: string };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sameKeys(o: Record<string, unknown>, keys: readonly string[]): boolean {
  const ks = Object.keys(o);
  return ks.length === keys.length && keys.every((k) => Object.hasOwn(o, k));
}

const unparsable = (message: string): ParsedVerdict => ({ ok: false, message });

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Free text from outside (a model's reason, a provider's error) made safe for canonical JSON: lone surrogates become U+FFFD. */
export function cleanText(s: string): string {
  return s.replace(LONE_SURROGATE, '\uFFFD');
}

function clip(s: string): string {
  const points = Array.from(s);
  return points.length > MAX_REASON_CODE_POINTS ? `${points.slice(0, MAX_REASON_CODE_POINTS - 1).join('')}…` : s;
}

function parseMatrix(items: unknown, ruleCount: number): ParsedVerdict {
  if (!Array.isArray(items) || items.length !== ruleCount) return unparsable(`assessments must list exactly ${ruleCount} rules`);
  const seen = new Array<Record<string, unknown> | undefined>(ruleCount).fill(undefined);
  for (const entry of items) {
    if (!isObject(entry) || !sameKeys(entry, ['index', 'outcome', 'certainty'])) return unparsable('an assessment must have exactly index, outcome and certainty');
    const idx = entry['index'];
    if (typeof idx !== 'number' || !Number.isInteger(idx) || idx < 0 || idx >= ruleCount || seen[idx] !== undefined) return unparsable('duplicate or out-of-range rule index');
    if (!['PASS', 'FAIL', 'AMBIGUOUS'].includes(entry['outcome'] as string) || !['solid', 'moderate', 'weak'].includes(entry['certainty'] as string)) {
      return unparsable('unrecognized outcome or certainty token');
    }
    seen[idx] = entry;
  }
  const failing = seen.flatMap((e, i) => (e && (e['outcome'] !== 'PASS' || e['certainty'] !== 'solid') ? [`rule ${i}: ${String(e['outcome'])} (${String(e['certainty'])})`] : []));
  if (failing.length === 0) return { ok: true, format: 'matrix', decision: 'ALLOW', reason: `all ${ruleCount} rules PASS (solid)` };
  return { ok: true, format: 'matrix', decision: 'DENY', reason: clip(failing.join('; ')) };
}

/**
 * Parses response bytes (a chat completion) into a decision. Never throws.
 *
 * @example
 * parseJudgeResponse(bytes, 2); // { ok: true, format: 'verdict', decision: 'DENY', reason: '…', action: 'TALLY_ACTION_V1|…' }
 */
export function parseJudgeResponse(response: Uint8Array, ruleCount: number): ParsedVerdict {
  const outer = parseStrictJson(response);
  if (!outer.ok) return unparsable(`the response is not UTF-8 JSON (${outer.code}: ${outer.message})`);
  const envelope = outer.value;
  const choices = isObject(envelope) ? envelope['choices'] : undefined;
  const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
  const message = isObject(first) ? first['message'] : undefined;
  const content = isObject(message) ? message['content'] : undefined;
  if (typeof content !== 'string') return unparsable('the response is not a chat completion with a text message');
  const inner = parseStrictJson(content);
  if (!inner.ok) return unparsable(`the message content is not JSON (${inner.code}: ${inner.message})`);
  const body = inner.value;
  if (!isObject(body)) return unparsable('the message content is not a JSON object');
  if (sameKeys(body, ['assessments'])) return parseMatrix(body['assessments'], ruleCount);
  const keys = Object.keys(body);
  if (keys.length !== 3 || keys[0] !== 'reason' || keys[1] !== 'verdict' || keys[2] !== 'action') {
    return unparsable('the verdict must have exactly reason, verdict and action, in that order');
  }
  const { reason, verdict, action } = body;
  if (typeof reason !== 'string' || Array.from(reason).length > MAX_REASON_CODE_POINTS) return unparsable(`reason must be a string of at most ${MAX_REASON_CODE_POINTS} characters`);
  if (verdict !== 'ALLOW' && verdict !== 'DENY') return unparsable('verdict must be "ALLOW" or "DENY"');
  if (typeof action !== 'string') return unparsable('action must be a string');
  return { ok: true, format: 'verdict', decision: verdict, reason, action };
}

/** What an assessed answer means for the intent. */
export interface AssessedVerdict {
  readonly admitted: boolean;
  readonly code?: 'judge_untrusted_signer' | 'judge_unparsable' | 'judge_action_mismatch' | 'judge_denied';
  readonly message: string;
  /** Recovered signer (lowercase), when the signature recovers. */
  readonly signer?: string;
  readonly decision?: 'ALLOW' | 'DENY';
  readonly format?: 'verdict' | 'matrix';
}

/** Inputs of {@link assessVerdict}. */
export interface AssessVerdictInput {
  readonly model: string;
  readonly requestSha256: string;
  readonly response: Uint8Array;
  readonly signature: unknown;
  /** Trusted signers, lowercase. */
  readonly trusted: readonly string[];
  readonly action: string;
  readonly ruleCount: number;
  /** The answer carries `signed_by: "operator"` (the operator holds the signing key). */
  readonly operatorSigned?: boolean;
  /** The mandate's `judges_independent`: an operator-signed answer does not count. */
  readonly independent?: boolean;
  /**
   * The answer shape the request asked for (version-2 mandates): an answer in the other
   * shape is `judge_unparsable` — a matrix does not echo the action. Absent: either shape (version 1).
   */
  readonly shape?: 'verdict' | 'matrix';
}

/**
 * Checks signer, then schema (and, with `shape`, that the answer is in the shape asked for),
 * then the action echo, then the decision.
 *
 * @example
 * assessVerdict({ model, requestSha256, response, signature, trusted: mandate.judges, action, ruleCount: 2 }).admitted;
 */
export function assessVerdict(i: AssessVerdictInput): AssessedVerdict {
  const text = verdictMessage(i.model, i.requestSha256, sha256Hex(i.response));
  const signer = i.trusted.find((t) => verifyText(text, i.signature, t));
  if (signer === undefined) {
    const other = recoverText(text, i.signature);
    if (other === null) return { admitted: false, code: 'judge_untrusted_signer', message: 'the verdict signature does not recover to any key' };
    return { admitted: false, code: 'judge_untrusted_signer', message: `verdict signer ${other} is not trusted by the mandate`, signer: other };
  }
  if (i.independent === true && i.operatorSigned === true) {
    return { admitted: false, code: 'judge_untrusted_signer', message: 'the answer is signed by a key the operator holds (signed_by "operator"); the mandate requires independent judges (judges_independent)', signer };
  }
  const p = parseJudgeResponse(i.response, i.ruleCount);
  if (!p.ok) return { admitted: false, code: 'judge_unparsable', message: p.message, signer };
  if (i.shape !== undefined && p.format !== i.shape) {
    const asked = i.shape === 'verdict' ? 'a verdict {reason, verdict, action}' : 'an assessment matrix {assessments}';
    return { admitted: false, code: 'judge_unparsable', message: `the request asked for ${asked}; the answer is ${p.format === 'verdict' ? 'a verdict' : 'an assessment matrix'}`, signer };
  }
  if (p.format === 'verdict' && p.action !== i.action) {
    return { admitted: false, code: 'judge_action_mismatch', message: 'the verdict judged another action than this proposal', signer, decision: p.decision, format: p.format };
  }
  if (p.decision === 'DENY') return { admitted: false, code: 'judge_denied', message: p.reason, signer, decision: 'DENY', format: p.format };
  return { admitted: true, message: p.reason, signer, decision: 'ALLOW', format: p.format };
}
