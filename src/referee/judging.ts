/**
 * Who judges, as a signed policy names it: one copy of the checks of the judging members
 * (`rules`, `judges` or `panel`, `judge_request`, `judges_independent`) for every policy that
 * asks for judges — the trading mandate (`spec.mandate`) and the payment policy
 * (`spec.payments`, docs/PROTOCOL.md §17.10). Problems are pushed onto the caller's list, so a
 * spec is mended in one round.
 */
import { address, attempt, exactKeys, fail, intIn, isObject, list, MANDATE_LIMITS, text, unique } from './mandate-checks.js';
import { isModelId } from './judge.js';
import type { Panel, PanelMember } from './panel.js';

/** The judging members of a policy, checked (addresses lowercase). */
export interface Judging {
  readonly rules: readonly string[];
  /** Trusted judge signers (lowercase); for a panel, its members' signers. */
  readonly judges: readonly string[];
  /** Independent judges in quorum (`undefined`: one judge, any signer in `judges`). */
  readonly panel: Panel | undefined;
  readonly judgeRequest: 'verdict' | 'verdict-v2' | 'assessment';
  readonly judgesIndependent: boolean;
  /** The one answer shape accepted (version 2); `undefined`: either (version 1). */
  readonly answerShape: 'verdict' | 'matrix' | undefined;
}

const ENDPOINT = /^https?:\/\/[\x21-\x7e]{1,192}$/;

/**
 * Checks the judging members of `o` (written `w` in problems), for a policy of `version`
 * (1: the version-1 verdict request, either answer shape). Returns them, or `undefined` after
 * pushing at least one problem. `between` runs after the judges and before `judge_request`
 * (the mandate checks its `judge_rate` there, so its problems keep their order).
 *
 * @example
 * const problems: string[] = [];
 * const j = judgingOf({ rules: ['size at most 5'], judges: ['0x…'] }, 'spec.payments', 2, problems);
 */
export function judgingOf(o: Record<string, unknown>, w: string, version: 1 | 2, problems: string[], between?: () => void): Judging | undefined {
  const before = problems.length;
  // The judging members depend on one another (rules, judges, panel): checked as one.
  const judging = attempt(problems, () => {
    let rules: string[] = [];
    let judges: string[] = [];
    if (o['rules'] !== undefined) {
      rules = list(o['rules'], `${w}.rules`, 1, MANDATE_LIMITS.maxRules).map((r, i) => text(r, `${w}.rules[${i}]`, MANDATE_LIMITS.ruleLength));
      if (o['judges'] === undefined && o['panel'] === undefined) fail(`${w}.judges or ${w}.panel is required when the mandate has rules (the judge signers it trusts)`);
    }
    let panel: Panel | undefined;
    if (o['panel'] !== undefined) {
      if (rules.length === 0) fail(`${w}.panel needs ${w}.rules (there is nothing to judge)`);
      if (o['judges'] !== undefined) fail(`${w}.judges and ${w}.panel are exclusive (a panel names its judges)`);
      const p = o['panel'];
      if (!isObject(p)) fail(`${w}.panel must be an object { judges, quorum }`);
      const pp = p as Record<string, unknown>;
      exactKeys(pp, `${w}.panel`, ['judges', 'quorum'], ['judges', 'quorum']);
      const members = list(pp['judges'], `${w}.panel.judges`, 1, MANDATE_LIMITS.maxJudges).map((j, i): PanelMember => {
        const where = `${w}.panel.judges[${i}]`;
        if (!isObject(j)) fail(`${where} must be an object { signer, model, endpoint? }`);
        const jj = j as Record<string, unknown>;
        exactKeys(jj, where, ['signer', 'model', 'endpoint'], ['signer', 'model']);
        const signer = address(jj['signer'], `${where}.signer`);
        if (!isModelId(jj['model'])) fail(`${where}.model must be 1–128 printable ASCII characters without spaces`);
        const endpoint = jj['endpoint'];
        if (endpoint !== undefined && (typeof endpoint !== 'string' || !ENDPOINT.test(endpoint))) fail(`${where}.endpoint must be an http(s) URL of at most 200 printable ASCII characters`);
        return { signer, model: jj['model'] as string, ...(endpoint === undefined ? {} : { endpoint: endpoint as string }) };
      });
      unique(members.map((x) => x.signer), `${w}.panel.judges (signers)`);
      const quorum = intIn(pp['quorum'], `${w}.panel.quorum`, 1, members.length);
      panel = { members, quorum };
      judges = members.map((x) => x.signer);
    }
    if (o['judges'] !== undefined) {
      if (rules.length === 0) fail(`${w}.judges needs ${w}.rules (there is nothing to judge)`);
      judges = list(o['judges'], `${w}.judges`, 1, MANDATE_LIMITS.maxJudges).map((x, i) => address(x, `${w}.judges[${i}]`));
      unique(judges, `${w}.judges`);
    }
    return { rules, judges, panel };
  });
  between?.();
  const hasRules = judging !== undefined ? judging.rules.length > 0 : o['rules'] !== undefined;
  // Version 2's verdict request is seed 002's (amount, thinking off); version 1 keeps the request it was sealed with.
  const verdictRequest = version === 2 ? 'verdict-v2' : 'verdict';
  const judgeRequest = attempt(problems, (): Judging['judgeRequest'] => {
    if (o['judge_request'] === undefined) return verdictRequest;
    if (!hasRules) fail(`${w}.judge_request needs ${w}.rules (there is nothing to judge)`);
    if (o['judge_request'] !== 'verdict' && o['judge_request'] !== 'assessment') fail(`${w}.judge_request must be "verdict" or "assessment"`);
    return o['judge_request'] === 'assessment' ? 'assessment' : verdictRequest;
  });
  const judgesIndependent = attempt(problems, () => {
    if (o['judges_independent'] === undefined) return false;
    if (!hasRules) fail(`${w}.judges_independent needs ${w}.rules (there is nothing to judge)`);
    if (typeof o['judges_independent'] !== 'boolean') fail(`${w}.judges_independent must be true or false`);
    return o['judges_independent'] as boolean;
  });
  if (problems.length > before || judging === undefined || judgeRequest === undefined || judgesIndependent === undefined) return undefined;
  const answerShape = version === 1 ? undefined : judgeRequest === 'assessment' ? 'matrix' : 'verdict';
  let panel = judging.panel;
  if (panel !== undefined && judgesIndependent) panel = { ...panel, independent: true };
  if (panel !== undefined && answerShape !== undefined) panel = { ...panel, shape: answerShape };
  return { rules: judging.rules, judges: judging.judges, panel, judgeRequest, judgesIndependent, answerShape };
}
