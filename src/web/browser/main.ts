/**
 * The grader's desk: loads a bundle (dropped, picked, embedded by `tally
 * view`, or fetched from the serving engine it came from), has the worker
 * verify it, and shows the verdict banner first, then charts and timeline.
 */
import { fromBase64, type ChainPin } from '../../protocol/index.js';
import { httpWords, showHttp, showRefused, showRunning, showVerdict, unverifiedNote } from './banner.js';
import { drawCharts } from './charts.js';
import type { ReplayState } from './evidence.js';
import { byId, h, put } from './dom.js';
import type { LogInputs } from './log-binding.js';
import { logConflict, suppliedLog } from './log-inputs.js';
import type { FromWorker, ToWorker, Verdict } from './messages.js';
import type { Row } from './rows.js';
import { startFollowing, type Following } from './live.js';
import { bindPackOpener } from './pack-view.js';
import { describe, pinFromForm, suppliedKey } from './pin-form.js';
import { bindDrop } from './drop.js';
import { RowFeed } from './row-feed.js';
import { AUTO_REPLAY_ENTRIES, showReplayIdle, showReplayReport, showReplayRunning } from './replay-view.js';
import { Timeline, options, readFilters, renderDetail } from './timeline.js';
import VerifyWorker from './worker.ts?worker&inline';

let worker: Worker | undefined;
/** A loaded day's rows, built once it is verified (undefined for a live day: its worker posts rows as it verifies). */
let feed: RowFeed | undefined;
/** The loaded day whose rows are built once its verdict comes. */
let rowsOf: Blob | undefined;
/** When the day shown was asked for (the page's own time to show it: verdict, rows, timeline). */
let asked = 0;
let rows: Row[] = [];
let pinned = false;
let loadedName = 'bundle';
let live: Following | undefined;
/** The day being checked was pinned with the key the engine served, not one the grader supplied. */
let servedKey = false;
/** What replay said of the day shown, for the detail's judge signatures. */
let replayState: ReplayState = 'pending';
/** No verdict shown yet for this day (a live day posts one a poll; the deep link opens on the first). */
let firstVerdict = true;
/** The verdict of the day shown (undefined while none). */
let verdict: Verdict | undefined;

const banner = byId('banner');
const progress = byId<HTMLProgressElement>('progress');
const progressText = byId('progress-text');
const detail = byId('detail');
const timeline = new Timeline(byId('timeline'), byId('pager'), (r) => {
  renderDetail(detail, r, pinned ? (download) => askReceipt(r.i, download) : undefined, (i) => worker?.postMessage({ type: 'entry', index: i } satisfies ToWorker), replayState);
  if (location.hash !== `#entry=${r.i}`) history.replaceState(null, '', `#entry=${r.i}`);
});

/** Shows the day's parts (summary, charts, timeline) once a day is loaded, the "Open a day" box moved below them (verdict and its meaning first); the idle help while none is. */
function shown(loaded: boolean): void {
  for (const id of ['summary', 'charts', 'work']) byId(id).hidden = !loaded;
  byId('idle-help').hidden = loaded;
  byId(loaded ? 'work' : 'progress-box').after(byId('load'));
}

/** The rows the chain verifier checked (a failed day's later lines are listed, never charted). */
const checked = (): Row[] => rows.filter((r) => r.kind !== 'unverified');

function refresh(): void {
  shown(verdict !== undefined);
  const uniq = (f: (r: Row) => string | undefined): string[] => [...new Set(rows.map(f).filter((x): x is string => x !== undefined))].sort();
  options(byId<HTMLSelectElement>('f-agent'), uniq((r) => r.agent), 'agents');
  options(byId<HTMLSelectElement>('f-action'), uniq((r) => r.action), 'actions');
  options(byId<HTMLSelectElement>('f-code'), uniq((r) => r.code), 'codes');
  timeline.render(rows, readFilters());
  const turns = rows.filter((r) => r.kind === 'turn');
  const count = (o: string): number => turns.filter((r) => r.outcome === o).length;
  const ok = checked().length;
  put(byId('summary'), `${ok} entries · ${rows.filter((r) => r.kind === 'frame').length} frames · ${turns.length} turns: ${count('admitted')} admitted, ${count('refused')} refused, ${count('stand-down')} stand-downs, ${count('note')} notes · ${rows.filter((r) => r.notices).length} with diagnostics${ok < rows.length ? ` · ${rows.length - ok} more lines not verified` : ''}`);
  const note = unverifiedNote(verdict);
  const unv = byId('unverified');
  unv.hidden = note === undefined;
  put(unv, note ?? '');
  byId('timeline-scroll').classList.toggle('unpinned-day', verdict?.state === 'failed-pin');
  drawCharts(byId('charts'), checked(), note);
}

function openFromHash(): void {
  const m = /^#entry=([0-9]{1,15})$/.exec(location.hash);
  if (!m) return;
  openEntry(Number(m[1]));
  keepInView = true;
}

/** A deep-linked detail stays in view while the replay report above it grows, until the grader moves. */
let keepInView = false;
for (const ev of ['wheel', 'keydown', 'pointerdown', 'touchstart']) window.addEventListener(ev, () => (keepInView = false), { passive: true });
const holdInView = new ResizeObserver(() => {
  if (keepInView) detail.scrollIntoView({ block: 'start' });
});

/** Opens entry `i` and brings its detail into view; says so when the filter hides it or the day has none. */
function openEntry(i: number): void {
  if (rows.length === 0) return;
  if (!timeline.open(i)) {
    timeline.close();
    put(detail, h('p', { class: 'muted', id: 'detail-none' }, rows.some((r) => r.i === i) ? `Entry ${i} is hidden by the filter: clear the filter to see it.` : `This day has no verified entry ${i}.`));
  }
  detail.scrollIntoView({ block: 'start' });
}

/** After a filter change: the detail follows it (an entry the filter hides is no longer shown). */
function filtered(): void {
  timeline.render(rows, readFilters());
  const open = timeline.openEntry;
  if (open !== undefined && !timeline.isShown(open)) {
    timeline.close();
    put(detail, h('p', { class: 'muted', id: 'detail-none' }, `Entry ${open} is hidden by the filter. Select an entry of the list.`));
  }
}

/** "3.1 of 12.0 KiB" (MiB from 1 MiB up). */
function bytesText(n: number, total: number): string {
  const [unit, d] = total >= 1048576 ? ['MiB', 1048576] : ['KiB', 1024];
  return `${(n / d).toFixed(1)} of ${(total / d).toFixed(1)} ${unit}`;
}

/** A fresh worker for a day named `name`, the page reset to receive it. */
function spawn(name: string, bundle?: Blob): Worker {
  worker?.terminate();
  feed?.stop();
  asked = performance.now();
  // A loaded day: its rows are built once it is verified (row-feed.ts); built beside it, they slowed the verifier (docs/PERFORMANCE.md).
  feed = undefined;
  rowsOf = bundle;
  rows = [];
  pinned = false;
  verdict = undefined;
  firstVerdict = true;
  replayState = 'pending';
  loadedName = name;
  put(detail, h('p', { class: 'muted' }, 'Select an entry: click it, or move with the arrow keys (j/k) and press Enter.'));
  showRunning(name);
  byId('progress-box').hidden = false;
  progress.value = 0;
  progress.setAttribute('data-updates', '0');
  const w = new VerifyWorker();
  worker = w;
  /** The verdict and, for a loaded day, every row: shown together. */
  const done = (m: Extract<FromWorker, { type: 'done' }>): void => {
    pinned = m.verdict.state === 'pinned';
    verdict = m.verdict;
    if (m.live && live && (m.verdict.state.startsWith('failed') || ('sealed' in m.verdict && m.verdict.sealed))) stopLive(m.verdict.state.startsWith('failed') ? 'stopped: the day failed verification' : 'the day is sealed: following stopped');
    showVerdict(banner, m.verdict, m.ms, servedKey);
    byId<HTMLDetailsElement>('load').open = false;
    refresh();
    const replayable = m.verdict.state === 'pinned' || m.verdict.state === 'unpinned' ? !m.live || m.verdict.sealed : m.verdict.state === 'failed-pin' && m.verdict.day !== undefined;
    let run: (() => void) | undefined;
    if (replayable) {
      const replayHost = byId('replay');
      replayHost.hidden = false;
      run = (): void => w.postMessage({ type: 'replay' } satisfies ToWorker);
      showReplayIdle(replayHost, rows.length, run);
    }
    // After the replay panel took its place, so the deep-linked detail lands in view.
    if (firstVerdict) openFromHash();
    firstVerdict = false;
    document.body.setAttribute('data-page-ms', (performance.now() - asked).toFixed(1));
    document.body.setAttribute('data-ready', 'true');
    if (run && rows.length <= AUTO_REPLAY_ENTRIES) run();
  };
  w.onmessage = (ev: MessageEvent<FromWorker>) => {
    const m = ev.data;
    if (m.type === 'progress') {
      progress.max = Math.max(1, m.total);
      progress.value = m.bytes;
      progress.setAttribute('data-updates', String(Number(progress.getAttribute('data-updates') ?? '0') + 1));
      put(progressText, `${m.entries} entries, ${bytesText(m.bytes, m.total)}`);
    } else if (m.type === 'rows') {
      for (const r of m.rows) rows.push(r);
    } else if (m.type === 'done' && rowsOf !== undefined && m.verified !== undefined) {
      // The rows of the verified entries, then the lines the worker listed unverified (already in `rows`).
      const tail = rows;
      // The verdict at once; the list, timeline and charts once the rows are built.
      showVerdict(banner, m.verdict, m.ms, servedKey);
      const read = progressText.textContent ?? '';
      put(progressText, `checked; listing ${m.verified.count} entries…`);
      feed = new RowFeed(rowsOf, m.verified.splits, m.verified.count, m.verified.leaves, (verifiedRows) => {
        put(progressText, read);
        rows = verifiedRows.concat(tail);
        feed = undefined;
        done(m);
      });
      rowsOf = undefined;
    } else if (m.type === 'done') {
      done(m);
    } else if (m.type === 'entry') {
      const pre = document.getElementById('entry-text');
      if (pre && pre.getAttribute('data-i') === String(m.index)) put(pre, m.text);
    } else if (m.type === 'replay-progress') {
      showReplayRunning(byId('replay'), m.entries, m.total);
    } else if (m.type === 'replayed') {
      for (const d of m.report.divergences) {
        const r = rows[d.index];
        if (r && r.i === d.index) {
          r.diverged = `${d.kind}: ${d.message}`;
          r.changes = d.changes;
        }
      }
      replayState = m.report.state;
      showReplayReport(byId('replay'), m.report, m.ms);
      if (m.report.divergences.length > 0) timeline.render(rows, readFilters());
      // The open entry's detail gains what changed, and whether its judges' signatures were re-verified.
      // Not `open`: that moves the cursor and focus, and the grader may be arrowing through the rows.
      timeline.refreshOpen();

      document.body.setAttribute('data-replayed', m.report.state);
    } else if (m.type === 'receipt') {
      if (m.text === undefined) {
        put(byId('receipt-status'), `No receipt for entry ${m.index}: ${m.problem ?? ''}`);
        return;
      }
      if (!m.download) {
        put(
          byId('receipt-status'),
          h('strong', {}, `Inclusion proof of entry ${m.index}`),
          ` in the pinned checkpoint's tree (size ${m.size ?? '?'}, root ${m.root ?? '?'}): ${m.proof?.length ?? 0} hashes, leaf's sibling first`,
          h('ol', { class: 'proof' }, ...(m.proof ?? []).map((x) => h('li', {}, x))),
        );
        return;
      }
      const a = h('a', { href: URL.createObjectURL(new Blob([m.text], { type: 'text/plain' })), download: `${loadedName.replace(/[^A-Za-z0-9._-]/g, '_')}-entry-${m.index}.tlog-proof` });
      document.body.append(a);
      a.click();
      a.remove();
      put(byId('receipt-status'), `Receipt of entry ${m.index} downloaded: check it with tally verify-proof <file> --vkey <vkey>.`);
    }
  };
  document.body.removeAttribute('data-ready');
  document.body.removeAttribute('data-replayed');
  byId('replay').hidden = true;
  return w;
}

function start(bundle: Blob, checkpoint: string | undefined, vkey: string | undefined, name: string, unsealed = false, policy?: string, pin?: ChainPin, served = false, log: LogInputs = {}): void {
  const conflict = logConflict(log, policy);
  if (conflict !== undefined) return refuseLog(conflict);
  stopLive();
  servedKey = served;
  const w = spawn(name, bundle);
  const msg: ToWorker = { type: 'verify', bundle, unsealed, ...(checkpoint === undefined ? {} : { checkpoint }), ...(vkey === undefined ? {} : { vkey }), ...(policy === undefined ? {} : { policy }), ...(pin === undefined ? {} : { pin }), ...log };
  w.postMessage(msg);
}

function askReceipt(index: number, download: boolean): void {
  worker?.postMessage({ type: 'receipt', index, download } satisfies ToWorker);
}

async function fromInputs(): Promise<void> {
  const b = byId<HTMLInputElement>('in-bundle').files?.[0];
  if (!b) return;
  const c = byId<HTMLInputElement>('in-checkpoint').files?.[0];
  const p = byId<HTMLInputElement>('in-policy').files?.[0];
  const pin = pinFromForm();
  if (typeof pin === 'string') return refusePin(pin);
  start(b, c ? await c.text() : undefined, await suppliedKey(), b.name, byId<HTMLInputElement>('in-unsealed').checked, p ? await p.text() : undefined, pin, false, await suppliedLog());
}

/** Stops building the rows of a day whose verdict a refusal has replaced (they would show that day again). */
function stopRows(): void {
  feed?.stop();
  feed = undefined;
  rowsOf = undefined;
}

/** A refused input (`what`): nothing checked, as the CLI exits 2. */
function refuse(what: string, why: string): void {
  stopLive();
  stopRows();
  worker?.terminate();
  worker = undefined;
  rows = [];
  verdict = undefined;
  refresh();
  showRefused(banner, what, why);
}

/** A refused combination of log pins. */
const refuseLog = (why: string): void => refuse('the engine-log pin', why);

/** A pin value outside the one encoding. */
const refusePin = (why: string): void => refuse(why.startsWith('the pinned size') ? 'the pinned size' : why.startsWith('the pinned session') ? 'the pinned session id' : 'the pinned receipt root', why);

/** Same-origin engine: GET /sessions/<id>/bundle (+ checkpoint and verifier key when it signs). Never another origin. */
async function fromServer(): Promise<void> {
  const session = byId<HTMLInputElement>('srv-session').value.trim();
  const token = byId<HTMLInputElement>('srv-token').value.trim();
  if (!/^[0-9a-f]{64}$/.test(session)) {
    stopRows();
    return showRefused(banner, 'the session id', `the session id must be 64 lowercase hex characters: you typed ${describe(session)}`);
  }
  const auth = { authorization: `Bearer ${token}` };
  const name = `session-${session.slice(0, 12)}`;
  const fail = (what: string, words: string): void => {
    stopRows();
    put(byId('srv-status'), `${what}: ${words}`);
    showHttp(banner, what, words);
  };
  const get = async (path: string): Promise<Response | undefined> => {
    try {
      return await fetch(path, { headers: auth, cache: 'no-store' });
    } catch (e) {
      fail(`GET ${path.split('?')[0]}`, `could not reach the engine (${e instanceof Error ? e.message : String(e)})`);
      return undefined;
    }
  };
  // The grader's own key pins; without one the served key is used and the banner says so (WIRE.md §5: never pin to /verifier-key).
  let vkey = await suppliedKey();
  const served = vkey === undefined;
  if (served) {
    const k = await get('/verifier-key');
    if (!k) return;
    if (k.ok) vkey = await k.text();
    else if (k.status !== 404) return fail('GET /verifier-key', httpWords(k.status, await k.text()));
  }
  let log = await suppliedLog();
  const conflict = logConflict(log, undefined);
  if (conflict !== undefined) return refuseLog(conflict);
  if (byId<HTMLInputElement>('srv-follow').checked) {
    stopLive();
    servedKey = served && vkey !== undefined;
    const w = spawn(name);
    w.postMessage({ type: 'follow' } satisfies ToWorker);
    // A pinned log key or identity: each checkpoint's binding is fetched from the engine and checked (a picked binding is of one checkpoint only).
    const pinnedLog = { ...(log.logKey === undefined ? {} : { logKey: log.logKey }), ...(log.logIdentity === undefined ? {} : { logIdentity: log.logIdentity }) };
    live = startFollowing({ session, token, ...(vkey === undefined ? {} : { vkey }), ...(Object.keys(pinnedLog).length === 0 ? {} : { log: pinnedLog }) }, w, (text) => put(byId('srv-status'), text), fail);
    return;
  }
  const res = await get(`/sessions/${session}/bundle`);
  if (!res) return;
  if (!res.ok) return fail('GET bundle', httpWords(res.status, await res.text()));
  const bundle = await res.blob();
  let cp: string | undefined;
  if (vkey !== undefined) {
    const c = await get(`/sessions/${session}/checkpoint`);
    if (!c) return;
    if (c.ok) cp = await c.text();
    else if (c.status !== 404) return fail('GET checkpoint', httpWords(c.status, await c.text()));
  }
  // With a log key or identity pinned and no binding picked, the day's binding is the engine's (WIRE.md §5, GET …/log-proof) of the
  // checkpoint just fetched, checked by the same rule as a picked one; none served (404) is TALLY_LOG_BINDING_MISSING.
  if ((log.logKey !== undefined || log.logIdentity !== undefined) && log.logProof === undefined && cp !== undefined) {
    const size = cp.split('\n')[1] ?? '';
    const l = /^[0-9]{1,15}$/.test(size) ? await get(`/sessions/${session}/log-proof?size=${size}`) : undefined;
    if (/^[0-9]{1,15}$/.test(size) && !l) return;
    if (l?.ok) log = { ...log, logProof: await l.text() };
    else if (l && l.status !== 404) return fail('GET log-proof', httpWords(l.status, await l.text()));
  }
  put(byId('srv-status'), `fetched ${bundle.size} bytes${cp ? ' and a signed checkpoint' : ''}${log.logProof !== undefined && (log.logKey !== undefined || log.logIdentity !== undefined) ? ' and its log binding' : ''}`);
  start(bundle, cp, vkey, name, true, undefined, undefined, served && vkey !== undefined, log);
}

function stopLive(why?: string): void {
  live?.stop();
  live = undefined;
  if (why !== undefined) put(byId('srv-status'), why);
}

function embedded(): void {
  const el = document.getElementById('tally-embedded');
  if (!el || !el.textContent) return;
  const data = JSON.parse(el.textContent) as { name?: string; bundle?: string; checkpoint?: string; key?: string; policy?: string; logProof?: string; logKey?: string };
  const bytes = typeof data.bundle === 'string' ? fromBase64(data.bundle) : undefined;
  if (!bytes) return;
  const log: LogInputs = { ...(typeof data.logProof === 'string' ? { logProof: data.logProof } : {}), ...(typeof data.logKey === 'string' ? { logKey: data.logKey } : {}) };
  start(new Blob([bytes as BlobPart]), data.checkpoint, data.key, data.name ?? 'bundle', false, typeof data.policy === 'string' ? data.policy : undefined, undefined, false, log);
}

for (const id of ['f-agent', 'f-action', 'f-code', 'f-diag']) byId(id).addEventListener('change', filtered);
byId('f-search').addEventListener('input', filtered);
// Links to an entry (divergences, facts, the detail's own) open it in place, even when the hash is already theirs.
document.addEventListener('click', (ev) => {
  const a = (ev.target as Element | null)?.closest?.('a[href^="#entry="]');
  if (!a) return;
  const m = /^#entry=([0-9]{1,15})$/.exec(a.getAttribute('href') ?? '');
  if (!m) return;
  ev.preventDefault();
  history.replaceState(null, '', `#entry=${m[1]}`);
  openEntry(Number(m[1]));
});
byId('load-files').addEventListener('click', () => void fromInputs());
byId('load-server').addEventListener('click', () => void fromServer());
bindPackOpener(); // the evidence-pack opener: its own button and worker
window.addEventListener('hashchange', openFromHash);
for (const id of ['replay', 'charts', 'banner']) holdInView.observe(byId(id));
let resizeTimer = 0;
const redraw = (): void => {
  window.clearTimeout(resizeTimer);
  resizeTimer = window.setTimeout(() => drawCharts(byId('charts'), checked(), unverifiedNote(verdict)), 150);
};
window.addEventListener('resize', redraw);
// The line colours follow the colour scheme (each 3:1 against its chart panel).
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', redraw);
bindDrop(byId('drop'), async (d) => {
  const pin = pinFromForm();
  if (typeof pin === 'string') return refusePin(pin);
  start(d.bundle, d.note, d.key, d.bundle.name, byId<HTMLInputElement>('in-unsealed').checked, d.policy, pin, false, d.log);
});
if (location.protocol === 'file:') {
  byId('server-box').hidden = true;
  byId('idle-live').hidden = true;
}
embedded();
byId('filters').addEventListener('submit', (ev) => ev.preventDefault());
