/**
 * The evidence of one entry in words, for the detail panel: a judge's (or a
 * panel's) answers with the quorum arithmetic, a frame's prices, fills and
 * referee transitions as readable fields. Display only: the verdict on these
 * bytes is the chain verifier's and replay's, never this file's. Every string
 * is untrusted bundle text and reaches the DOM as text.
 */
import { h } from './dom.js';
import type { PanelAnswerRow, Row } from './rows.js';

/** What replay has said about the day so far (the detail says whether a signature was re-verified). */
export type ReplayState = 'pending' | 'replayed' | 'diverged' | 'chain' | 'error';

const short = (a: string): string => (/^0x[0-9a-fA-F]{40}$/.test(a) ? `${a.slice(0, 10)}…${a.slice(-4)}` : a);

/** Whether a recorded signature is re-verified, in words. */
function signatureWords(a: { signed: boolean; signer?: string; judge?: string; failure?: string }, replay: ReplayState, diverged: boolean): string {
  if (!a.signed) return a.failure !== undefined ? 'none (no answer)' : 'absent';
  const who = a.signer === undefined ? 'recovers to no key' : a.judge !== undefined && a.signer.toLowerCase() === a.judge.toLowerCase() ? 'by the named judge' : `by ${short(a.signer)}, not the named judge`;
  if (diverged) return `${who}; NOT confirmed: replay diverged at this entry`;
  if (replay === 'replayed') return `${who}; verified (replay re-checked it)`;
  return `${who} (recorded; replay re-verifies it)`;
}

/** The judge section of a turn's detail: one judge, or a panel with each answer and the quorum arithmetic. */
export function judgeSection(r: Row, replay: ReplayState): HTMLElement | undefined {
  const v = r.verdict;
  if (!v) return undefined;
  const diverged = r.diverged !== undefined;
  if (v.panel === undefined) {
    return h(
      'section',
      { class: 'judges', id: 'judge-one' },
      h('h3', {}, 'Judge'),
      h(
        'p',
        {},
        `${v.model ? `${v.model}: ` : ''}${v.decision ?? v.code ?? '?'}${v.message ? ` — ${v.message}` : ''}. Signature: ${signatureWords({ signed: v.signed, ...(v.signer === undefined ? {} : { signer: v.signer, judge: v.signer }) }, replay, diverged)}.`,
      ),
    );
  }
  const q = v.quorum;
  const answers = v.panel.map((a: PanelAnswerRow, i) =>
    h(
      'li',
      { 'data-judge': a.judge },
      h(
        'div',
        { class: 'who' },
        h('span', { class: 'n' }, `judge ${i + 1}`),
        ' ',
        h('code', { class: 'addr', title: a.judge }, short(a.judge)),
        ' · ',
        h('span', { class: 'model' }, a.model ?? '?'),
        ' · ',
        h('strong', { class: `decision ${a.admitted ? 'allow' : 'deny'}` }, `${a.admitted ? '✓' : '✗'} ${a.failure !== undefined ? 'no answer' : (a.decision ?? '?')}`),
      ),
      h('div', { class: 'reason' }, `${a.message ?? ''}${a.code !== undefined && !a.admitted ? ` (${a.code})` : ''}`),
      h('div', { class: 'sig muted' }, 'signature: ', h('span', { class: 'signature' }, signatureWords(a, replay, diverged)), ' · ', h('span', { class: 'timeout' }, a.failure === 'timeout' ? 'timed out: counts as DENY' : a.failure !== undefined ? `${a.failure}: counts as DENY` : 'answered in time')),
    ),
  );
  return h(
    'section',
    { class: 'judges', id: 'judge-panel' },
    h('h3', {}, `Judge panel: ${v.panel.length} judges`),
    q
      ? h('p', { id: 'quorum', class: 'quorum' }, `${q.allow} of ${q.n} judges gave a valid ALLOW signed by their own key; the quorum is ${q.k}: ${q.allow} ${q.allow >= q.k ? '≥' : '<'} ${q.k}, so the verdict ${q.allow >= q.k ? 'admits' : 'refuses'}${v.admitted === undefined || v.admitted === q.allow >= q.k ? '' : ' — but the recorded verdict says otherwise'}.`)
      : undefined,
    h('ol', { class: 'panel' }, ...answers),
  );
}

/** A frame's readable fields: prices, fills and the referee transitions it delivers. */
export function frameSection(r: Row): HTMLElement | undefined {
  if (r.kind !== 'frame' || (!r.prices && !r.fills?.length && !r.frameTransitions)) return undefined;
  return h(
    'section',
    { class: 'frame-fields', id: 'frame-fields' },
    r.prices && r.prices.length > 0 ? h('div', { class: 'field' }, h('dt', {}, 'prices'), h('dd', {}, r.prices.map(([m, p]) => `${m} ${p}`).join(' · '))) : undefined,
    r.fills && r.fills.length > 0
      ? h('div', { class: 'field' }, h('dt', {}, 'fills'), h('dd', {}, h('ul', { class: 'plain' }, ...r.fills.map((f) => h('li', {}, `${f.agent ? `${f.agent}: ` : ''}${f.action} ${f.side} ${f.market} ${Number.isFinite(f.size) ? f.size : '?'}${f.price ? ` at ${f.price}` : ''}`)))))
      : undefined,
    r.frameTransitions ? h('div', { class: 'field' }, h('dt', {}, 'referee transitions'), h('dd', {}, h('ul', { class: 'plain' }, ...r.frameTransitions.map((t) => h('li', {}, t))))) : undefined,
  );
}

/** Why a turn's ruling lists ticket transitions (they are the frame's, not this turn's doing). */
export const TRANSITIONS_WHY = 'applied from the frame this turn answers, before the turn was ruled (signed releases and redemptions the runtime delivered); they are not caused by this turn\'s ruling';
