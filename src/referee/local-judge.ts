/**
 * The deterministic local judge: rule-based, offline, signing with a local
 * key. The default judge of the demo and the tests. It answers like an
 * OpenAI-compatible endpoint (a chat completion whose content is the verdict
 * JSON), so both judges share one reading path.
 *
 * It checks only rules written in the forms below (case-insensitive, anywhere
 * in the rule text); a rule it cannot read is AMBIGUOUS, so it DENIES rather
 * than allowing what it did not understand.
 *
 * | form                                 | checks                                   |
 * |--------------------------------------|------------------------------------------|
 * | `only long` / `only short`           | `side` of open/modify                    |
 * | `never trade <MARKET>`               | `market` differs (also `never open`, `never touch`) |
 * | `no <action>` (`no transfers`, …)    | `action` differs                         |
 * | `size at most <decimal>`             | `size` ≤ the value                       |
 * | `context must mention "<text>"`      | the context contains the text            |
 * | `context must not mention "<text>"`  | the context does not contain the text    |
 *
 * Whatever the rules, a context that tries to instruct the judge ("ignore
 * previous instructions", "you are now", "system prompt", …) is a DENY.
 */
import { canonicalBytes, type CanonicalObject } from '../protocol/index.js';
import { canonicalDecimal } from '../intent/decimal.js';
import { sha256Hex, verdictMessage, type JudgeRequestInput } from './bytes.js';
import { decCmp } from './decimal.js';
import { accountOf, signText, type RefereeSigner } from './eip191.js';
import { isModelId, type Judge, type JudgeAnswer, type JudgeQuery } from './judge.js';
import { TallyError } from '../protocol/errors.js';

/** Default model id of the local judge. */
export const LOCAL_JUDGE_MODEL = 'tally-local-rules-v1';

/** Options of {@link createLocalJudge}. */
export interface LocalJudgeOptions {
  /** The key that signs verdicts; its address must be in the mandate's `judges`. */
  readonly key: RefereeSigner;
  /** Model id (default {@link LOCAL_JUDGE_MODEL}). */
  readonly model?: string;
  /** Answer as the verdict object (default) or as the seed's assessment matrix. */
  readonly format?: 'verdict' | 'matrix';
  /**
   * Demo hook: replaces the message content the judge would send (return
   * `undefined` to keep it). The reply is still enveloped and signed, so it
   * exercises the same reading path as a misbehaving model.
   */
  readonly script?: (query: JudgeQuery, content: string) => string | undefined;
}

type Outcome = { readonly outcome: 'PASS' | 'FAIL' | 'AMBIGUOUS'; readonly certainty: 'solid' | 'weak'; readonly why: string };

const INJECTION = /ignore (?:all |any )?(?:the )?(?:previous|prior|above|earlier) instructions|disregard (?:the |your )?(?:mandate|rules|instructions)|you are now|system prompt|answer (?:with )?"?allow"?/i;

function str(intent: CanonicalObject, key: string): string | undefined {
  const v = intent[key];
  return typeof v === 'string' ? v : undefined;
}

/** Evaluates one rule; exported for tests and documentation. */
export function evaluateLocalRule(rule: string, req: Pick<JudgeRequestInput, 'intent' | 'context'>): Outcome {
  const intent = req.intent;
  const action = str(intent, 'action') ?? '';
  const ctx = (req.context ?? '').toLowerCase();
  let m = /\bonly (long|short)\b/i.exec(rule);
  if (m) {
    const want = m[1]!.toLowerCase();
    const side = str(intent, 'side');
    if (side === undefined) return { outcome: 'PASS', certainty: 'solid', why: `${action} has no side` };
    return side === want ? { outcome: 'PASS', certainty: 'solid', why: `side is ${side}` } : { outcome: 'FAIL', certainty: 'solid', why: `side is ${side}, the rule allows only ${want}` };
  }
  m = /\bnever (?:trade|open|touch) ([A-Za-z0-9][A-Za-z0-9._/:-]*)/i.exec(rule);
  if (m) {
    const excluded = m[1]!.replace(/[.:]+$/, ''); // a sentence's full stop is not part of the symbol
    const market = str(intent, 'market');
    return market !== undefined && market.toLowerCase() === excluded.toLowerCase()
      ? { outcome: 'FAIL', certainty: 'solid', why: `market ${market} is excluded` }
      : { outcome: 'PASS', certainty: 'solid', why: `market is not ${excluded}` };
  }
  m = /\bno (open|modify|close|transfer)s?\b/i.exec(rule);
  if (m) {
    const banned = m[1]!.toLowerCase();
    return action === banned ? { outcome: 'FAIL', certainty: 'solid', why: `${banned} is excluded` } : { outcome: 'PASS', certainty: 'solid', why: `action is ${action}` };
  }
  m = /\bsize at most ([0-9]+(?:\.[0-9]+)?)/i.exec(rule);
  if (m) {
    const limit = canonicalDecimal(m[1]!);
    const size = str(intent, 'size');
    if (!limit.ok || size === undefined) return { outcome: 'AMBIGUOUS', certainty: 'weak', why: 'size limit unreadable' };
    return decCmp(size, limit.value) <= 0 ? { outcome: 'PASS', certainty: 'solid', why: `size ${size} ≤ ${limit.value}` } : { outcome: 'FAIL', certainty: 'solid', why: `size ${size} > ${limit.value}` };
  }
  m = /\bcontext must (not |never )?mention "([^"]+)"/i.exec(rule);
  if (m) {
    const needle = m[2]!.toLowerCase();
    const present = ctx.includes(needle);
    const forbidden = m[1] !== undefined;
    if (forbidden) return present ? { outcome: 'FAIL', certainty: 'solid', why: `the context mentions "${m[2]}"` } : { outcome: 'PASS', certainty: 'solid', why: `no "${m[2]}" in the context` };
    return present ? { outcome: 'PASS', certainty: 'solid', why: `the context mentions "${m[2]}"` } : { outcome: 'FAIL', certainty: 'solid', why: `the context does not mention "${m[2]}"` };
  }
  return { outcome: 'AMBIGUOUS', certainty: 'weak', why: 'the local judge cannot read this rule' };
}

function clip(s: string, n: number): string {
  const p = Array.from(s);
  return p.length > n ? `${p.slice(0, n - 1).join('')}…` : s;
}

/** The message content the local judge answers with. */
export function localJudgeContent(req: JudgeRequestInput, format: 'verdict' | 'matrix'): string {
  const injected = req.context !== undefined && INJECTION.test(req.context);
  const outcomes = req.rules.map((r) => evaluateLocalRule(r, req));
  if (format === 'matrix') {
    const assessments = outcomes.map((o, index) => (injected ? { index, outcome: 'FAIL', certainty: 'solid' } : { index, outcome: o.outcome, certainty: o.certainty }));
    return JSON.stringify({ assessments });
  }
  let verdict: 'ALLOW' | 'DENY' = 'ALLOW';
  let reason: string;
  if (injected) {
    verdict = 'DENY';
    reason = 'The context tries to instruct the judge; it is untrusted data, so the action is denied.';
  } else {
    const bad = outcomes.findIndex((o) => o.outcome !== 'PASS');
    if (bad >= 0) {
      verdict = 'DENY';
      reason = `Rule ${bad} ("${clip(req.rules[bad]!, 60)}"): ${outcomes[bad]!.why}.`;
    } else {
      reason = `All ${outcomes.length} rules hold: ${outcomes.map((o) => o.why).join('; ')}.`;
    }
  }
  return JSON.stringify({ reason: clip(reason, 280), verdict, action: req.action });
}

/** The chat-completion bytes the local judge answers with (canonical JSON). */
export function localCompletion(model: string, requestSha256: string, content: string): Uint8Array {
  return canonicalBytes({
    id: `local-${requestSha256.slice(0, 24)}`,
    object: 'chat.completion',
    model,
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
  });
}

/**
 * Creates the deterministic local judge.
 *
 * @example
 * const judge = createLocalJudge({ key: '0x…' });
 * const ruler = createRefereeRuler({ judge, store });
 */
export function createLocalJudge(options: LocalJudgeOptions): Judge {
  const model = options.model ?? LOCAL_JUDGE_MODEL;
  if (!isModelId(model)) throw new TallyError('TALLY_REFEREE_JUDGE_OPTIONS', 'The model id must be 1–128 printable ASCII characters without spaces.');
  const fixed = options.format;
  const account = accountOf(options.key);
  return {
    model,
    signer: account.address.toLowerCase(),
    async ask(query: JudgeQuery): Promise<JudgeAnswer> {
      // Unless fixed, answer in the format the request asks for (seed 003's matrix for an `assessment` request).
      const natural = localJudgeContent(query.request, fixed ?? (query.request.format === 'assessment' ? 'matrix' : 'verdict'));
      const content = options.script?.(query, natural) ?? natural;
      const requestSha = sha256Hex(query.requestBytes);
      const response = localCompletion(model, requestSha, content);
      const signature = await signText(account, verdictMessage(model, requestSha, sha256Hex(response)));
      return { ok: true, response, signature };
    },
  };
}
