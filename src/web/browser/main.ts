/**
 * The grader's desk: loads a bundle (dropped, picked, embedded by `tally
 * view`, or fetched from the serving engine it came from), has the worker
 * verify it, and shows the verdict banner first, then charts and timeline.
 */
import { fromBase64, isDigestHex, type ChainPin } from '../../protocol/index.js';
import { drawCharts } from './charts.js';
import { byId, h, put } from './dom.js';
import type { FromWorker, ToWorker, Verdict } from './messages.js';
import type { Row } from './rows.js';
import { startFollowing, type Following } from './live.js';
import { AUTO_REPLAY_ENTRIES, showReplayIdle, showReplayReport, showReplayRunning } from './replay-view.js';
import { Timeline, options, readFilters, renderDetail } from './timeline.js';
import VerifyWorker from './worker.ts?worker&inline';

let worker: Worker | undefined;
let rows: Row[] = [];
let pinned = false;
let loadedName = 'bundle';
let live: Following | undefined;

const banner = byId('banner');
const progress = byId<HTMLProgressElement>('progress');
const progressText = byId('progress-text');
const detail = byId('detail');
const timeline = new Timeline(byId('timeline'), byId('pager'), (r) => {
  renderDetail(detail, r, pinned ? (download) => askReceipt(r.i, download) : undefined, (i) => worker?.postMessage({ type: 'entry', index: i } satisfies ToWorker));
  if (location.hash !== `#entry=${r.i}`) history.replaceState(null, '', `#entry=${r.i}`);
});

function showVerdict(v: Verdict, ms: number): void {
  banner.className = `banner ${v.state}`;
  banner.setAttribute('data-state', v.state);
  banner.setAttribute('data-ms', ms.toFixed(1));
  const took = `checked in the browser in ${(ms / 1000).toFixed(2)} s`;
  for (const a of ['data-index', 'data-code', 'data-session', 'data-size', 'data-root', 'data-sealed']) banner.removeAttribute(a);
  if (v.state === 'pinned' || v.state === 'unpinned') {
    // What the chain verifier answered, for machines (the conformance corpus drives this page).
    banner.setAttribute('data-session', v.sessionId);
    banner.setAttribute('data-size', String(v.state === 'pinned' ? v.total : v.size));
    banner.setAttribute('data-sealed', String(v.sealed));
    if (v.state === 'unpinned') banner.setAttribute('data-root', v.root);
  }
  switch (v.state) {
    case 'pinned':
      put(
        banner,
        h('strong', {}, v.witnessed ? 'Verified and pinned by quorum' : 'Verified and pinned'),
        h('span', { class: 'sub' }, ` — ${v.coversAll ? `all ${v.total} entries` : `the first ${v.size} of ${v.total} entries`} match the checkpoint signed by ${v.signedBy.join(', ')}${v.sealed ? '' : ' (day in progress, not sealed yet)'}`),
        v.witnessed
          ? h('div', { class: 'witnessed', id: 'banner-witnessed' }, `witnessed ${v.witnessed.k} of ${v.witnessed.n} (quorum ${v.witnessed.q}): cosigned by ${v.witnessed.signed.join(', ') || 'no witness'}${v.witnessed.missing.length > 0 ? `; not by ${v.witnessed.missing.join(', ')}` : ''}`)
          : h('div', { class: 'meta' }, 'no witness policy loaded: pinned by the engine key alone, not by a witness quorum'),
        h('div', { class: 'root' }, 'receipt root ', h('code', { id: 'banner-root' }, v.root)),
        h('div', { class: 'meta' }, `session ${v.sessionId} · ${took}`),
      );
      return;
    case 'unpinned':
      put(
        banner,
        h('strong', {}, 'Self-consistent but unpinned'),
        h('span', { class: 'sub' }, ` — ${v.size} entries${v.sealed ? ', sealed' : ', not sealed (in progress)'}; ${v.why}`),
        h('div', { class: 'root' }, 'receipt root ', h('code', { id: 'banner-root' }, v.root)),
        h('div', { class: 'meta' }, `session ${v.sessionId} · ${took}`),
      );
      return;
    case 'failed-entry':
      banner.setAttribute('data-index', String(v.index));
      banner.setAttribute('data-code', v.code);
      put(banner, h('strong', {}, `Failed at entry ${v.index}: ${v.code}`), h('div', { class: 'sub' }, v.message), h('div', { class: 'meta' }, `entries before ${v.index} are shown below · ${took}`));
      return;
    case 'failed-pin':
      banner.setAttribute('data-code', v.code);
      put(banner, h('strong', {}, `Failed: the checkpoint (${v.stage}): ${v.code}`), h('div', { class: 'sub' }, v.message));
      return;
  }
}

function refresh(): void {
  const uniq = (f: (r: Row) => string | undefined): string[] => [...new Set(rows.map(f).filter((x): x is string => x !== undefined))].sort();
  options(byId<HTMLSelectElement>('f-agent'), uniq((r) => r.agent), 'agents');
  options(byId<HTMLSelectElement>('f-action'), uniq((r) => r.action), 'actions');
  options(byId<HTMLSelectElement>('f-code'), uniq((r) => r.code), 'codes');
  timeline.render(rows, readFilters());
  const turns = rows.filter((r) => r.kind === 'turn');
  const count = (o: string): number => turns.filter((r) => r.outcome === o).length;
  put(byId('summary'), `${rows.length} entries · ${rows.filter((r) => r.kind === 'frame').length} frames · ${turns.length} turns: ${count('admitted')} admitted, ${count('refused')} refused, ${count('stand-down')} stand-downs, ${count('note')} notes · ${rows.filter((r) => r.notices).length} with diagnostics`);
  drawCharts(byId('charts'), rows);
}

function openFromHash(): void {
  const m = /^#entry=([0-9]{1,15})$/.exec(location.hash);
  if (m) timeline.open(Number(m[1]));
}

/** A fresh worker for a day named `name`, the page reset to receive it. */
function spawn(name: string): Worker {
  worker?.terminate();
  rows = [];
  pinned = false;
  loadedName = name;
  put(detail, h('p', { class: 'muted' }, 'Select an entry: click it, or move with the arrow keys (j/k) and press Enter.'));
  banner.className = 'banner running';
  banner.setAttribute('data-state', 'running');
  banner.removeAttribute('data-index');
  banner.removeAttribute('data-code');
  put(banner, h('strong', {}, 'Verifying…'), h('span', { class: 'sub' }, ` ${name}`));
  progress.value = 0;
  progress.setAttribute('data-updates', '0');
  const w = new VerifyWorker();
  worker = w;
  w.onmessage = (ev: MessageEvent<FromWorker>) => {
    const m = ev.data;
    if (m.type === 'progress') {
      progress.max = Math.max(1, m.total);
      progress.value = m.bytes;
      progress.setAttribute('data-updates', String(Number(progress.getAttribute('data-updates') ?? '0') + 1));
      put(progressText, `${m.entries} entries, ${(m.bytes / 1048576).toFixed(1)} of ${(m.total / 1048576).toFixed(1)} MiB`);
    } else if (m.type === 'rows') {
      for (const r of m.rows) rows.push(r);
    } else if (m.type === 'done') {
      pinned = m.verdict.state === 'pinned';
      if (m.live && live && (m.verdict.state.startsWith('failed') || ('sealed' in m.verdict && m.verdict.sealed))) stopLive(m.verdict.state.startsWith('failed') ? 'stopped: the day failed verification' : 'the day is sealed: following stopped');
      showVerdict(m.verdict, m.ms);
      byId<HTMLDetailsElement>('load').open = false;
      refresh();
      openFromHash();
      document.body.setAttribute('data-ready', 'true');
      if ((m.verdict.state === 'pinned' || m.verdict.state === 'unpinned') && (!m.live || m.verdict.sealed)) {
        const replayHost = byId('replay');
        replayHost.hidden = false;
        const run = (): void => w.postMessage({ type: 'replay' } satisfies ToWorker);
        showReplayIdle(replayHost, rows.length, run);
        if (rows.length <= AUTO_REPLAY_ENTRIES) run();
      }
    } else if (m.type === 'entry') {
      const pre = document.getElementById('entry-text');
      if (pre && pre.getAttribute('data-i') === String(m.index)) put(pre, m.text);
    } else if (m.type === 'replay-progress') {
      showReplayRunning(byId('replay'), m.entries, m.total);
    } else if (m.type === 'replayed') {
      for (const d of m.report.divergences) {
        const r = rows[d.index];
        if (r && r.i === d.index) r.diverged = `${d.kind}: ${d.message}`;
      }
      showReplayReport(byId('replay'), m.report, m.ms);
      if (m.report.divergences.length > 0) timeline.render(rows, readFilters());
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
      put(byId('receipt-status'), `Receipt of entry ${m.index} downloaded: check it with tally verify-proof <file> --key <vkey>.`);
    }
  };
  document.body.removeAttribute('data-ready');
  document.body.removeAttribute('data-replayed');
  byId('replay').hidden = true;
  return w;
}

function start(bundle: Blob, checkpoint: string | undefined, vkey: string | undefined, name: string, unsealed = false, policy?: string, pin?: ChainPin): void {
  stopLive();
  const w = spawn(name);
  const msg: ToWorker = { type: 'verify', bundle, unsealed, ...(checkpoint === undefined ? {} : { checkpoint }), ...(vkey === undefined ? {} : { vkey }), ...(policy === undefined ? {} : { policy }), ...(pin === undefined ? {} : { pin }) };
  w.postMessage(msg);
}

function askReceipt(index: number, download: boolean): void {
  worker?.postMessage({ type: 'receipt', index, download } satisfies ToWorker);
}

async function fromInputs(): Promise<void> {
  const b = byId<HTMLInputElement>('in-bundle').files?.[0];
  if (!b) return;
  const c = byId<HTMLInputElement>('in-checkpoint').files?.[0];
  const k = byId<HTMLInputElement>('in-key').files?.[0];
  const keyText = byId<HTMLInputElement>('in-key-text').value.trim();
  const p = byId<HTMLInputElement>('in-policy').files?.[0];
  const pin = pinFromForm();
  if (typeof pin === 'string') return put(progressText, pin);
  start(b, c ? await c.text() : undefined, k ? await k.text() : keyText !== '' ? keyText : undefined, b.name, byId<HTMLInputElement>('in-unsealed').checked, p ? await p.text() : undefined, pin);
}

/** The values pinned by hand (as `tally verify --root --session --size`), or what is wrong with them. */
function pinFromForm(): ChainPin | undefined | string {
  const root = byId<HTMLInputElement>('pin-root').value.trim();
  const session = byId<HTMLInputElement>('pin-session').value.trim();
  const size = byId<HTMLInputElement>('pin-size').value.trim();
  const pin: { receiptRoot?: string; sessionId?: string; size?: number } = {};
  if (root !== '') {
    if (!isDigestHex(root)) return 'the pinned receipt root must be 64 lowercase hex characters';
    pin.receiptRoot = root;
  }
  if (session !== '') {
    if (!isDigestHex(session)) return 'the pinned session id must be 64 lowercase hex characters';
    pin.sessionId = session;
  }
  if (size !== '') {
    if (!/^[1-9][0-9]{0,15}$/.test(size)) return 'the pinned size must be a positive integer';
    pin.size = Number(size);
  }
  return Object.keys(pin).length === 0 ? undefined : pin;
}

/** Same-origin engine: GET /sessions/<id>/bundle (+ checkpoint and verifier key when it signs). Never another origin. */
async function fromServer(): Promise<void> {
  const session = byId<HTMLInputElement>('srv-session').value.trim();
  const token = byId<HTMLInputElement>('srv-token').value.trim();
  if (!/^[0-9a-f]{64}$/.test(session)) return put(byId('srv-status'), 'session id must be 64 lowercase hex');
  const auth = { authorization: `Bearer ${token}` };
  let vkey: string | undefined;
  const k = await fetch('/verifier-key', { headers: auth, cache: 'no-store' });
  if (k.ok) vkey = await k.text();
  if (byId<HTMLInputElement>('srv-follow').checked) {
    stopLive();
    const w = spawn(`session-${session.slice(0, 12)}`);
    w.postMessage({ type: 'follow' } satisfies ToWorker);
    live = startFollowing({ session, token, ...(vkey === undefined ? {} : { vkey }) }, w, (text) => put(byId('srv-status'), text));
    return;
  }
  const res = await fetch(`/sessions/${session}/bundle`, { headers: auth, cache: 'no-store' });
  if (!res.ok) return put(byId('srv-status'), `GET bundle: HTTP ${res.status}`);
  const bundle = await res.blob();
  let cp: string | undefined;
  if (vkey !== undefined) {
    const c = await fetch(`/sessions/${session}/checkpoint`, { headers: auth, cache: 'no-store' });
    if (c.ok) cp = await c.text();
  }
  put(byId('srv-status'), `fetched ${bundle.size} bytes${cp ? ' and a signed checkpoint' : ''}`);
  start(bundle, cp, vkey, `session-${session.slice(0, 12)}`, true);
}

function stopLive(why?: string): void {
  live?.stop();
  live = undefined;
  if (why !== undefined) put(byId('srv-status'), why);
}

function embedded(): void {
  const el = document.getElementById('tally-embedded');
  if (!el || !el.textContent) return;
  const data = JSON.parse(el.textContent) as { name?: string; bundle?: string; checkpoint?: string; key?: string; policy?: string };
  const bytes = typeof data.bundle === 'string' ? fromBase64(data.bundle) : undefined;
  if (!bytes) return;
  start(new Blob([bytes as BlobPart]), data.checkpoint, data.key, data.name ?? 'bundle', false, typeof data.policy === 'string' ? data.policy : undefined);
}

for (const id of ['f-agent', 'f-action', 'f-code', 'f-diag']) byId(id).addEventListener('change', () => timeline.render(rows, readFilters()));
byId('f-search').addEventListener('input', () => timeline.render(rows, readFilters()));
byId('load-files').addEventListener('click', () => void fromInputs());
byId('load-server').addEventListener('click', () => void fromServer());
window.addEventListener('hashchange', openFromHash);
let resizeTimer = 0;
window.addEventListener('resize', () => {
  window.clearTimeout(resizeTimer);
  resizeTimer = window.setTimeout(() => drawCharts(byId('charts'), rows), 150);
});
const drop = byId('drop');
drop.addEventListener('dragover', (ev) => {
  ev.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (ev) => {
  ev.preventDefault();
  drop.classList.remove('over');
  const files = [...(ev.dataTransfer?.files ?? [])];
  void (async () => {
    const bundle = files.find((f) => f.name.endsWith('.jsonl')) ?? files[0];
    if (!bundle) return;
    const note = files.find((f) => f !== bundle && /\.(note|tlog-proof)$/.test(f.name));
    const key = files.find((f) => f !== bundle && /\.(vkey|key|keys)$/.test(f.name));
    const policy = files.find((f) => f !== bundle && /(^|\.)policy$/.test(f.name));
    const pin = pinFromForm();
    if (typeof pin === 'string') return put(progressText, pin);
    start(bundle, note ? await note.text() : undefined, key ? await key.text() : undefined, bundle.name, byId<HTMLInputElement>('in-unsealed').checked, policy ? await policy.text() : undefined, pin);
  })();
});
if (location.protocol === 'file:') byId('server-box').hidden = true;
embedded();
byId('filters').addEventListener('submit', (ev) => ev.preventDefault());
