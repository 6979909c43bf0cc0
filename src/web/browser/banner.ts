/**
 * The verdict banner: what was checked, against whose key, in the words and
 * states of `tally verify` ("valid, pinned to …", "valid, unpinned",
 * "invalid"). Every state carries an icon and a word besides its colour.
 * Green only for a pin the grader chose: a checkpoint checked against the key
 * the engine under audit served is its own state (`served`), never green.
 */
import type { ChainPin } from '../../protocol/index.js';
import { byId, h, put } from './dom.js';
import type { Verdict } from './messages.js';

/** Banner states beyond the worker's verdicts: a served key, a refused input, an HTTP failure. */
export type BannerState = Verdict['state'] | 'served' | 'refused' | 'http' | 'running' | 'idle';

const ICON: Record<BannerState, string> = { pinned: '✓', served: '!', unpinned: '?', 'failed-entry': '✗', 'failed-pin': '✗', refused: '✗', http: '✗', running: '…', idle: '·' };

const DATA = ['data-index', 'data-code', 'data-session', 'data-size', 'data-root', 'data-sealed', 'data-key', 'data-log'];

function head(banner: HTMLElement, state: BannerState, title: string): HTMLElement {
  banner.className = `banner ${state}`;
  banner.setAttribute('data-state', state);
  for (const a of DATA) banner.removeAttribute(a);
  return h('div', { class: 'head' }, h('span', { class: 'icon', 'aria-hidden': 'true' }, ICON[state]), h('strong', { id: 'banner-title' }, title));
}

/** The hand-typed pins in the CLI's words ("receipt root …, session …, size …"). */
function handWords(p: ChainPin): string[] {
  const out: string[] = [];
  if (p.receiptRoot !== undefined) out.push(`receipt root ${p.receiptRoot}`);
  if (p.sessionId !== undefined) out.push(`session ${p.sessionId}`);
  if (p.size !== undefined) out.push(`size ${p.size}`);
  return out;
}

/** Shows `v`; `servedKey`: the key was the one the engine served (GET /verifier-key), not one the grader supplied. */
export function showVerdict(banner: HTMLElement, v: Verdict, ms: number, servedKey: boolean): void {
  const took = `checked in this browser in ${(ms / 1000).toFixed(2)} s`;
  const served = v.state === 'pinned' && servedKey && v.signedBy.length > 0;
  const top = head(banner, served ? 'served' : v.state, '');
  banner.setAttribute('data-ms', ms.toFixed(1));
  if (v.state === 'pinned' || v.state === 'unpinned') {
    // What the chain verifier answered, for machines (the conformance corpus drives this page).
    banner.setAttribute('data-session', v.sessionId);
    banner.setAttribute('data-size', String(v.state === 'pinned' ? v.total : v.size));
    banner.setAttribute('data-sealed', String(v.sealed));
    banner.setAttribute('data-root', v.root);
  }
  const title = top.querySelector('strong')!;
  const root = (r: string): HTMLElement => h('div', { class: 'root' }, 'receipt root ', h('code', { id: 'banner-root' }, r));
  switch (v.state) {
    case 'pinned': {
      banner.setAttribute('data-key', served ? 'served' : v.signedBy.length > 0 ? 'supplied' : 'none');
      const to: string[] = [];
      if (v.signedBy.length > 0) to.push(`the checkpoint (${v.size} entries) signed by ${v.signedBy.join(', ')}`);
      if (v.hand) to.push(...handWords(v.hand));
      const covers = v.coversAll ? `all ${v.total} entries` : `the first ${v.size} of ${v.total} entries (the rest are not covered by the checkpoint)`;
      if (served) {
        title.textContent = 'Pinned to the key this engine served, not one you supplied';
        put(
          banner,
          top,
          h('div', { class: 'sub' }, `The checkpoint's signature is the key GET /verifier-key handed out, by the same engine under audit: a hostile engine signs its own forgery with its own key. This says only that ${covers} are what the engine signed.`),
          h('div', { class: 'what' }, 'To pin: paste the engine key you obtained out of band (its published key) in "engine key" and load again.'),
          root(v.root),
          h('div', { class: 'meta' }, `session ${v.sessionId} · ${took}`),
        );
        return;
      }
      title.textContent = v.witnessed || (v.log?.checked === true && v.log.witnessed) ? 'Valid, pinned by quorum' : 'Valid, pinned';
      if (v.log) banner.setAttribute('data-log', v.log.checked ? 'bound' : 'unchecked');
      put(
        banner,
        top,
        h('div', { class: 'sub' }, `pinned to ${to.join(', ')} — ${covers}${v.sealed ? ', sealed' : ' (day in progress, not sealed yet)'}`),
        v.witnessed
          ? h('div', { class: 'witnessed', id: 'banner-witnessed' }, `witnessed ${v.witnessed.k} of ${v.witnessed.n} (quorum ${v.witnessed.q}): cosigned by ${v.witnessed.signed.join(', ') || 'no witness'}${v.witnessed.missing.length > 0 ? `; not by ${v.witnessed.missing.join(', ')}` : ''}`)
          : v.signedBy.length > 0
            ? h('div', { class: 'meta' }, 'no witness policy loaded: pinned by the engine key alone, not by a witness quorum')
            : h('div', { class: 'meta' }, 'pinned by the values you typed, as tally verify --root/--session/--size'),
        v.log ? logLine(v.log) : undefined,
        root(v.root),
        h('div', { class: 'meta' }, `session ${v.sessionId} · ${took}`),
      );
      return;
    }
    case 'unpinned':
      title.textContent = 'Valid, unpinned';
      put(
        banner,
        top,
        h('div', { class: 'sub' }, `internal consistency only: ${v.size} entries${v.sealed ? ', sealed' : ', not sealed (in progress)'}; ${v.why}. Anyone can recompute every hash of a forged day: pin it with a receipt root known out of band, or the signed receipt note and the engine key.`),
        root(v.root),
        h('div', { class: 'meta' }, `session ${v.sessionId} · ${took}`),
      );
      return;
    case 'failed-entry':
      banner.setAttribute('data-index', String(v.index));
      banner.setAttribute('data-code', v.code);
      title.textContent = `Invalid: entry ${v.index} fails (${v.code})`;
      put(banner, top, h('div', { class: 'sub' }, v.message), h('div', { class: 'what' }, `Entries 0–${v.index - 1} verified and are shown below; entry ${v.index} and every entry after it are not verified and nothing is drawn from them.`), h('div', { class: 'meta' }, took));
      return;
    case 'failed-pin':
      banner.setAttribute('data-code', v.code);
      title.textContent = v.stage === 'log' || v.stage === 'log-witnesses' || v.stage === 'identity' ? `Invalid: the day's engine-log binding fails (${v.stage}: ${v.code})` : `Invalid: the checkpoint does not pin this day (${v.stage}: ${v.code})`;
      put(
        banner,
        top,
        h('div', { class: 'sub', id: 'banner-why' }, v.message),
        v.day
          ? h('div', { class: 'what', id: 'banner-unpinned' }, `The day below is shown unpinned: it is self-consistent (${v.day.size} entries${v.day.sealed ? ', sealed' : ''}), which a forger can recompute; nothing of it is pinned. Replay below shows what its rulings re-derive to.`)
          : v.chain
            ? h('div', { class: 'what' }, `The chain fails too, at entry ${v.chain.index} (${v.chain.code}): ${v.chain.message}`)
            : undefined,
        v.day ? root(v.day.root) : undefined,
        h('div', { class: 'meta' }, took),
      );
      return;
  }
}

/** The banner's line on the day's log binding (the words of tally verify --log-key), or why it was not checked. */
function logLine(log: NonNullable<Extract<Verdict, { state: 'pinned' }>['log']>): HTMLElement {
  if (!log.checked) return h('div', { class: 'what', id: 'banner-log' }, `⚠ ${log.why}`);
  const w = log.witnessed;
  const quorum = w ? `; witnessed ${w.k} of ${w.n} (quorum ${w.q}): cosigned by ${w.signed.join(', ') || 'no witness'}` : '';
  const id = log.identity;
  if (id !== undefined) {
    const shard = id.previous ? `a previous shard (within its final checkpoint) of the log identity you pinned, now ${id.current}` : 'the current shard of the log identity you pinned';
    return h('div', { class: 'meta', id: 'banner-log' }, `engine log: leaf ${log.index} of ${log.origin} (size ${log.size})${log.seal ? ', the seal' : ''}, signed by the log key of ${shard} (root key ${id.rootKey})${w ? `${quorum}, by the shard's policy` : "; the shard's policy requires no witness"}`);
  }
  return h('div', { class: 'meta', id: 'banner-log' }, `engine log: leaf ${log.index} of ${log.origin} (size ${log.size})${log.seal ? ', the seal' : ''}, signed by the log key you pinned${quorum}`);
}

/** Shows an input the page refused before checking anything (a pin value not in the one encoding). */
export function showRefused(banner: HTMLElement, what: string, why: string): void {
  const top = head(banner, 'refused', `Not checked: ${what} refused`);
  put(banner, top, h('div', { class: 'sub', id: 'banner-why' }, why));
  document.body.setAttribute('data-ready', 'true');
}

/** Words for an HTTP answer of the engine. */
export function httpWords(status: number, body: string): string {
  const base = status === 401 ? 'unauthorized: check the auditor token' : status === 403 ? 'forbidden: this token may not read this session' : status === 404 ? 'not found: this engine has no such session' : status === 429 ? 'rate limited: wait and load again' : status >= 500 ? `the engine failed (HTTP ${status})` : `refused (HTTP ${status})`;
  let detail = '';
  try {
    const e = (JSON.parse(body) as { error?: { code?: unknown; message?: unknown } }).error;
    if (e && typeof e.message === 'string') detail = ` — ${typeof e.code === 'string' ? `${e.code}: ` : ''}${e.message}`;
  } catch {
    // Not the wire's error JSON: the status says it.
  }
  return `${base}${detail}`;
}

/** Shows a failed request to the engine; `kept`: a day is already shown (the banner keeps its verdict and adds the failure). */
export function showHttp(banner: HTMLElement, what: string, words: string): void {
  const kept = banner.getAttribute('data-state') !== 'running' && banner.getAttribute('data-state') !== 'idle' && banner.getAttribute('data-state') !== 'http' && banner.getAttribute('data-state') !== 'refused';
  if (kept) {
    document.getElementById('banner-http')?.remove();
    banner.append(h('div', { class: 'http', id: 'banner-http' }, `✗ ${what}: ${words}`));
    return;
  }
  const top = head(banner, 'http', `Could not load from this engine: ${words}`);
  put(banner, top, h('div', { class: 'sub', id: 'banner-why' }, `${what}: ${words}`));
  document.body.setAttribute('data-ready', 'true');
}

/** The banner while a day is being verified. */
export function showRunning(name: string): void {
  const banner = byId('banner');
  const top = head(banner, 'running', 'Verifying…');
  put(banner, top, h('span', { class: 'sub' }, ` ${name}`));
}

/** What of a failed day is not verified, said where the timeline and the charts draw it; undefined when all is. */
export function unverifiedNote(v: Verdict | undefined): string | undefined {
  if (v === undefined) return undefined;
  const cut = v.state === 'failed-entry' ? v : v.state === 'failed-pin' ? v.chain : undefined;
  if (cut !== undefined) return `✗ Entry ${cut.index} and every entry after it: not verified (${cut.code}). They are listed, each marked ⚠ not verified, and nothing is drawn from them: the charts show entries 0–${cut.index - 1}, which verified.`;
  if (v.state === 'failed-pin') return `✗ Not pinned: the checkpoint does not vouch for these entries (${v.code}). They are listed and drawn as the bundle has them, self-consistent only — a forger can recompute every hash.`;
  return undefined;
}
