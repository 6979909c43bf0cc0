/**
 * Plain-text views for people: the demo summary and the day timeline
 * (`tally demo`, `tally inspect`). Pure functions from data to lines.
 */
import type { DemoReport } from './run.js';
import type { DayCounts, Notice, TimelineRow } from './timeline.js';
import { panelHas, panelSplit } from './panel-view.js';

/** Filters of a timeline (`tally inspect --agent/--action/--ruling`). */
export interface TimelineFilter {
  readonly agent?: string;
  /** `open`, `modify`, `close`, `transfer`, `note` or `stand-down`. */
  readonly action?: string;
  /** `admitted`, `rejected`, a ruling code, a stand-down class, or a session diagnostic / `duplicate` (notices). */
  readonly ruling?: string;
}

/** `n` and the noun, singular for exactly 1 ("1 turn", "2 turns", "1 entry", "3 entries"). */
export function counted(n: number, singular: string, plural = singular.endsWith('y') ? `${singular.slice(0, -1)}ies` : `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

function list(m: Readonly<Record<string, number>>): string {
  const entries = Object.entries(m).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return entries.length === 0 ? 'none' : entries.map(([k, v]) => `${k} ${v}`).join(', ');
}

function sum(m: Readonly<Record<string, number>>): number {
  return Object.values(m).reduce((a, b) => a + b, 0);
}

function ms(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`;
}

/** The demo summary, as printed by `tally demo`; `tally` is how the hints spell the command (`npx tally` under npm). */
export function formatReport(r: DemoReport, tally = 'tally'): string[] {
  const c = r.counts;
  const diagnostics = Object.fromEntries(Object.entries(r.diagnostics).filter(([k]) => k !== 'duplicate'));
  const mode = r.mode === 'new' ? 'recorded now' : r.mode === 'resumed' ? 'an interrupted day, finished now' : 'already sealed in this store: reused, nothing written';
  const check = (name: string, ch: { ok: boolean; detail: string }) => `${name} ${ch.ok ? 'ok' : 'FAILED'} (${ch.detail})`;
  const lines = [
    `tally demo: seed ${r.seed}, ${r.wakes} wakes, ${r.store} (${mode})`,
    '',
    `  session       ${r.sessionId}`,
    `  entries       ${c.entries} (${counted(c.frames, 'frame')}, ${counted(c.turns, 'turn')}, sealed)`,
    `  turns         ${counted(c.intents, 'intent')}: ${c.admitted} admitted, ${c.rejected} rejected; ${counted(c.notes, 'note')}; ${counted(sum(c.standDowns), 'stand-down')}`,
    `  admitted      ${list(c.admittedByAction)}`,
    `  rejected      ${list(c.rejectedByCode)}`,
    `  stand-downs   ${list(c.standDowns)}`,
    `  diagnostics   ${list(diagnostics)}`,
    `  duplicates    ${r.diagnostics['duplicate'] ?? 0} (retries and redeliveries, answered idempotently)`,
    `  referee       mandate ${r.referee.instance}: quota ${r.referee.quota.used} used + ${r.referee.quota.locked} locked of ${r.referee.quota.cap} (${r.referee.quota.free} free), ${r.referee.quota.used_txs + r.referee.quota.locked_txs} of ${r.referee.quota.tx_cap} transactions`,
    `  tickets       ${list(r.referee.tickets)}; transitions ${list(r.referee.transitions)}`,
    `  judges        ${counted(r.referee.verdicts.judged, 'verdict')}, ${r.referee.verdicts.allowed} allowed; panel splits ${list(c.panels)}`,
    `  answers       ${list(c.judgeAnswers)}`,
    `  receipt root  ${r.receipt.receiptRoot}`,
    '',
    `  ${check('bundle', r.checks.bundle)}`,
    `  ${check('receipt', r.checks.receipt)}`,
    `  ${check('replay', r.checks.replay)}`,
    `  ${check('proof', r.checks.proof)}${r.checks.proof.index > 0 ? `: the turn of wake ${r.checks.proof.ordinal}` : ''}`,
    `  ${check('log', r.checks.log)}`,
    '',
    `  phases        ${Object.entries(r.timings).map(([k, v]) => `${k} ${ms(v)}`).join(', ')}; total ${ms(r.totalMs)}`,
    `  files         ${r.files.dir}/: ${[r.files.db, r.files.bundle, r.files.receipt, r.files.checkpoint, r.files.verifierKey, r.files.proof, r.files.summary, `${r.files.log}/`, r.files.logProof, r.files.logKey]
      .filter((f): f is string => f !== undefined && f.startsWith(r.files.dir))
      .map((f) => f.slice(r.files.dir.length).replace(/^[\\/]/, ''))
      .join(', ')}`,
    '',
    `  next          ${tally} inspect ${r.files.bundle} --ruling rejected`,
    `                ${tally} verify ${r.files.bundle} --vkey ${r.verifierKey} --checkpoint ${r.files.checkpoint}`,
    ...(r.files.logKey === undefined || r.files.log === undefined ? [] : [`                ${tally} verify ${r.files.bundle} --vkey ${r.verifierKey} --checkpoint ${r.files.checkpoint} --log-key ${r.files.logKey} --log ${r.files.log}`]),
    `                ${tally} verify-proof ${r.files.proof} --vkey ${r.verifierKey} --checkpoint ${r.files.checkpoint}`,
    `                ${tally} replay ${r.files.bundle}`,
  ];
  return lines;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** How long texts are shown: cut to fit a line, or (inspect --wide) whole. */
type Cut = (s: string, n: number) => string;

function clip(s: string, n: number): string {
  const one = s.replace(/\s+/g, ' ');
  return one.length <= n ? one : one.slice(0, n - 1) + '…';
}

/** The whole text on one line (whitespace runs folded, nothing cut). */
const whole: Cut = (s) => s.replace(/\s+/g, ' ');

/** True when a turn row passes the filter. */
export function turnMatches(row: Extract<TimelineRow, { kind: 'turn' }>, f: TimelineFilter): boolean {
  if (f.agent !== undefined && row.agent !== f.agent) return false;
  if (f.action !== undefined) {
    const action = row.body === 'intent' ? row.action : row.body;
    if (action !== f.action) return false;
  }
  if (f.ruling !== undefined) {
    const bad = row.rulings.filter((x) => !x.admitted);
    if (f.ruling === 'admitted') return row.rulings.length > 0 && bad.length === 0;
    if (f.ruling === 'rejected') return bad.length > 0;
    if (row.body === 'stand-down') return f.ruling === 'stand-down' || row.failureClass === f.ruling;
    return bad.some((x) => x.code === f.ruling) || panelHas(row.panel, f.ruling);
  }
  return true;
}

function noticeMatches(n: Notice, f: TimelineFilter): boolean {
  return f.agent === undefined && f.action === undefined && f.ruling !== undefined && n.outcome === f.ruling;
}

function hasFilter(f: TimelineFilter): boolean {
  return f.agent !== undefined || f.action !== undefined || f.ruling !== undefined;
}

/** The rows a filter keeps (every row without a filter; matching turns and notices otherwise). */
export function filterRows(rows: readonly TimelineRow[], f: TimelineFilter): TimelineRow[] {
  if (!hasFilter(f)) return rows.slice();
  const out: TimelineRow[] = [];
  for (const r of rows) {
    if (r.kind === 'turn' && turnMatches(r, f)) out.push(r);
    else if ((r.kind === 'frame' || r.kind === 'seal') && r.notices?.some((n) => noticeMatches(n, f))) out.push({ ...r, notices: r.notices.filter((n) => noticeMatches(n, f)) });
  }
  return out;
}

function noticeLine(n: Notice): string {
  const how = n.outcome === 'duplicate' ? 'answered as a duplicate' : 'refused, nothing written';
  return `          ! slot ${n.ordinal}: ${n.probe} → ${n.outcome} (${how})`;
}

/**
 * A turn's outcome in one line: ADMITTED, or REJECTED with each refusing
 * code (stage) and the first reason (cut to `width` unless `cut` is whole).
 */
export function turnVerdict(r: Extract<TimelineRow, { kind: 'turn' }>, cut: Cut = clip, width = 80): string {
  const bad = r.rulings.filter((x) => !x.admitted);
  const verdict = r.rulings.length === 0 ? 'no ruling' : bad.length === 0 ? 'ADMITTED' : `REJECTED ${bad.map((b) => `${b.code ?? b.by}${b.stage ? ` (${b.stage})` : ''}`).join(', ')}`;
  const why = bad[0]?.message;
  const ticket = r.ticket === undefined ? '' : ` ticket #${r.ticket}`;
  return `${verdict}${ticket}${why ? `: ${cut(why, width)}` : ''}`;
}

function turnLine(r: Extract<TimelineRow, { kind: 'turn' }>, cut: Cut): string {
  const head = `turn  ${String(r.ordinal).padStart(5)}`;
  if (r.body === 'stand-down') return `${head}  ${'runtime'.padEnd(7)}  stand-down (${r.failureClass})`;
  if (r.body === 'note') return `${head}  ${'agent'.padEnd(7)}  note: ${cut(r.text ?? '', 90)}`;
  const what = [r.action, r.side, r.size, r.market, r.target === undefined ? undefined : `→ ${r.target}`].filter((x) => x !== undefined).join(' ');
  return `${head}  ${(r.agent ?? '?').padEnd(7)}  ${cut(what, 44).padEnd(44)}  ${turnVerdict(r, cut)}`;
}

/** Who said what, when a panel did not allow unanimously. */
function panelLines(r: Extract<TimelineRow, { kind: 'turn' }>, cut: Cut): string[] {
  const p = r.panel;
  if (!p || p.answers.every((a) => a.admitted)) return [];
  const who = p.answers.map((a) => `${a.model} ${a.outcome}${a.admitted || a.message === undefined ? '' : ` (${cut(a.message, 60)})`}`);
  return [`          panel ${panelSplit(p)} (quorum ${p.k}): ${who.join(' · ')}`];
}

function transitionLines(r: Extract<TimelineRow, { kind: 'turn' }>, cut: Cut): string[] {
  return (r.transitions ?? []).filter((t) => !t.ok).map((t) => `          ! ticket${t.ticket === undefined ? '' : ` #${t.ticket}`}: ${t.op} refused: ${t.code ?? '?'}${t.message ? ` (${cut(t.message, 80)})` : ''}`);
}

/** The timeline as text, one line per row (and one per notice). */
export function formatTimeline(rows: readonly TimelineRow[], f: TimelineFilter = {}, options: { readonly wide?: boolean } = {}): string[] {
  const cut: Cut = options.wide === true ? whole : clip;
  const lines: string[] = [];
  for (const r of filterRows(rows, f)) {
    switch (r.kind) {
      case 'genesis':
        lines.push(`session ${r.sessionId}  "${r.name}"${r.agents.length > 0 ? `  agents: ${r.agents.join(', ')}` : ''}`);
        break;
      case 'frame': {
        if (!hasFilter(f)) {
          const prices = r.prices ? Object.entries(r.prices).map(([k, v]) => `${k} ${v}`).join('  ') : r.data === undefined ? '' : cut(JSON.stringify(r.data), 80);
          const fills = r.fills && r.fills.length > 0 ? `  fills: ${r.fills.map((x) => `${String(x['agent'])} ${String(x['action'])}${x['price'] === undefined ? '' : ` @ ${String(x['price'])}`}`).join(', ')}` : '';
          const tickets = r.referee
            ? `  tickets: ${[...r.referee.redeemed.map((t) => `#${t} redeemed`), ...r.referee.released.map((t) => `#${t} released`), ...(r.referee.terminate ? ['mandate terminated'] : [])].join(', ')}`
            : '';
          lines.push(`frame ${String(r.ordinal).padStart(5)}  ${iso(r.time)}  ${r.ordinal === -1 ? 'OPEN  ' : ''}${prices}${fills}${tickets}`);
        }
        for (const n of r.notices ?? []) lines.push(noticeLine(n));
        break;
      }
      case 'turn':
        lines.push(turnLine(r, cut), ...panelLines(r, cut), ...transitionLines(r, cut));
        break;
      case 'seal':
        if (!hasFilter(f)) lines.push(`seal         commits to the ${counted(r.size, 'entry', 'entries')} before it (root ${r.root})`);
        for (const n of r.notices ?? []) lines.push(noticeLine(n));
        break;
    }
  }
  return lines;
}

/** Lines of counts for the end of a timeline. */
export function formatCounts(c: DayCounts): string[] {
  const lines = [
    `${counted(c.turns, 'turn')}: ${counted(c.intents, 'intent')} (${c.admitted} admitted, ${c.rejected} rejected), ${counted(c.notes, 'note')}, ${counted(sum(c.standDowns), 'stand-down')}`,
    `rejected by code: ${list(c.rejectedByCode)}`,
    `runtime notices: ${list(c.notices)}`,
  ];
  if (Object.keys(c.transitions).length > 0) lines.push(`ticket transitions: ${list(c.transitions)}`);
  if (Object.keys(c.panels).length > 0) lines.push(`panel splits: ${list(c.panels)}`, `judge answers: ${list(c.judgeAnswers)}`);
  if (c.quota) lines.push(`quota: ${String(c.quota['used'])} used + ${String(c.quota['locked'])} locked of ${String(c.quota['cap'])} (${String(c.quota['free'])} free); transactions ${String(c.quota['used_txs'])} used + ${String(c.quota['locked_txs'])} locked of ${String(c.quota['tx_cap'])}`);
  return lines;
}
