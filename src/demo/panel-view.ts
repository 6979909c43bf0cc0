/**
 * A panel verdict as a person reads it (`tally inspect`, the demo summary):
 * how many judges allowed out of how many, the quorum, and who said what.
 * Read from the ruling as recorded; the bundle's verification and replay are
 * what make it trustworthy, not this view.
 */
import type { CanonicalObject } from '../protocol/index.js';

/** One judge's answer in a panel verdict. */
export interface PanelAnswerView {
  /** The member's signer address. */
  readonly judge: string;
  readonly model: string;
  /** A valid ALLOW signed by this member. */
  readonly admitted: boolean;
  /** `ALLOW`, a ruling code (`judge_denied`, `judge_untrusted_signer`, …) or a failure class (`timeout`, …). */
  readonly outcome: string;
  readonly message?: string;
}

/** A panel verdict: k of n, how many allowed, admitted or not, and every answer in the mandate's order. */
export interface PanelView {
  readonly k: number;
  readonly n: number;
  readonly allow: number;
  readonly admitted: boolean;
  readonly answers: readonly PanelAnswerView[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The outcome word of one recorded answer: `ALLOW`, its failure class, else its code (`DENY` without one). */
function outcomeOf(a: Record<string, unknown>): string {
  if (a['admitted'] === true) return 'ALLOW';
  if (typeof a['failure'] === 'string') return a['failure'];
  return typeof a['code'] === 'string' ? a['code'] : 'DENY';
}

/** The panel verdict of a turn's ruling, if its `verdict` member holds one. */
export function panelOf(ruling: CanonicalObject | undefined): PanelView | undefined {
  const v = ruling?.['verdict'];
  if (!isObject(v) || !isObject(v['quorum']) || !Array.isArray(v['panel'])) return undefined;
  const q = v['quorum'];
  if (typeof q['k'] !== 'number' || typeof q['n'] !== 'number' || typeof q['allow'] !== 'number') return undefined;
  const answers = v['panel'].flatMap((a): PanelAnswerView[] => {
    if (!isObject(a) || typeof a['judge'] !== 'string' || typeof a['model'] !== 'string') return [];
    const message = typeof a['message'] === 'string' ? a['message'] : undefined;
    return [{ judge: a['judge'], model: a['model'], admitted: a['admitted'] === true, outcome: outcomeOf(a), ...(message === undefined ? {} : { message }) }];
  });
  return { k: q['k'], n: q['n'], allow: q['allow'], admitted: v['admitted'] === true, answers };
}

/**
 * The split of a panel verdict, as counted: `"2 of 3 allow → admitted"`.
 *
 * @example
 * panelSplit({ k: 2, n: 3, allow: 1, admitted: false, answers: [] }); // '1 of 3 allow → denied'
 */
export function panelSplit(p: PanelView): string {
  return `${p.allow} of ${p.n} allow → ${p.admitted ? 'admitted' : 'denied'}`;
}

/** True when a panel answer carries `outcome` (a code or a failure class). */
export function panelHas(p: PanelView | undefined, outcome: string): boolean {
  return p?.answers.some((a) => a.outcome === outcome) ?? false;
}
