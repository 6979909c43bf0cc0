/**
 * The timeline: filters (agent, action, ruling code, diagnostics), search
 * (nonce, hash, index), a virtual list of entries with keyboard navigation, and
 * the detail of one entry. Every field is untrusted bundle text and reaches
 * the DOM only as text nodes.
 */
import { byId, h, put } from './dom.js';
import { frameSection, judgeSection, TRANSITIONS_WHY, type ReplayState } from './evidence.js';
import { changesList } from './replay-view.js';
import type { Row } from './rows.js';

/** Filter and search state. */
export interface Filters {
  agent: string;
  action: string;
  code: string;
  diag: boolean;
  q: string;
}

/** Whether `r` passes the filters. */
export function matches(r: Row, f: Filters): boolean {
  if (f.agent !== '' && r.agent !== f.agent) return false;
  if (f.action !== '' && r.action !== f.action) return false;
  if (f.code !== '' && r.code !== f.code) return false;
  if (f.diag && !((r.notices?.length ?? 0) > 0 || r.outcome === 'stand-down')) return false;
  const q = f.q.trim().toLowerCase();
  if (q !== '') {
    if (/^[0-9]+$/.test(q)) return r.i === Number(q);
    return r.hash.startsWith(q) || (r.nonce ?? '').toLowerCase().includes(q) || (r.signer ?? '').toLowerCase() === q;
  }
  return true;
}

function fmtTime(ms: number | undefined): string {
  if (ms === undefined) return '';
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString().replace('T', ' ').replace('.000Z', 'Z');
}

/** The word a verdict colour also carries (colour-blind safe): an icon before the code. */
const MARK: Record<string, string> = { admitted: '✓ ', refused: '✗ ', 'stand-down': '⊘ ', note: '✎ ' };

/** The mark of an unverified line: an icon and the words, not colour alone. */
export const UNVERIFIED_MARK = '⚠ not verified';

/** One line of the list. */
function line(r: Row): HTMLLIElement {
  if (r.unverified) {
    return h(
      'li',
      { class: 'row unverified', tabindex: '-1', 'data-i': String(r.i), role: 'option', id: `row-${r.i}`, title: r.unverified.why },
      h('span', { class: 'ix' }, `#${r.i}`),
      h('span', { class: 'kind' }, '?'),
      h('span', { class: 'time' }, ''),
      h('span', { class: 'what' }, r.unverified.claims),
      h('span', { class: 'code unverified-mark' }, UNVERIFIED_MARK),
    );
  }
  const what =
    r.kind === 'turn'
      ? [r.agent, r.action, r.market, r.size].filter((x) => x !== undefined).join(' ') || (r.standDown ? `stand-down (${r.standDown})` : 'turn')
      : r.kind === 'frame'
        ? `frame ${r.ordinal}${r.fills?.length ? ` · ${r.fills.length} fill(s)` : ''}`
        : (r.message ?? r.kind);
  const li = h(
    'li',
    { class: `row ${r.outcome ?? ''}${r.diverged ? ' diverged' : ''}`, tabindex: '-1', 'data-i': String(r.i), role: 'option', id: `row-${r.i}` },
    h('span', { class: 'ix' }, `#${r.i}`),
    h('span', { class: 'kind' }, r.kind),
    h('span', { class: 'time' }, fmtTime(r.time)),
    h('span', { class: 'what' }, what),
    h('span', { class: `code ${r.outcome ?? ''}` }, `${MARK[r.outcome ?? ''] ?? ''}${r.code ?? ''}`),
    r.notices ? h('span', { class: 'diag', title: `${r.notices.length} runtime diagnostic(s): ${r.notices.join('; ')}` }, `⚑ ${r.notices.length}`) : undefined,
    r.diverged ? h('span', { class: 'diverged-mark' }, 'diverged') : undefined,
  );
  return li;
}

function field(name: string, value: string | undefined): HTMLElement | undefined {
  if (value === undefined || value === '') return undefined;
  return h('div', { class: 'field' }, h('dt', {}, name), h('dd', {}, value));
}

/** The detail panel of one entry. */
export function renderDetail(host: HTMLElement, r: Row, receipt: ((download: boolean) => void) | undefined, askEntry: (i: number) => void, replay: ReplayState = 'pending'): void {
  const bytes = (what: string): HTMLElement => {
    const d = h('details', { id: 'entry-bytes' }, h('summary', {}, `the entry's exact line (${what})`), h('pre', { class: 'authored', id: 'entry-text', 'data-i': String(r.i) }, 'loading…'));
    d.addEventListener('toggle', () => d.open && askEntry(r.i));
    return d;
  };
  if (r.unverified) {
    put(
      host,
      h('h2', {}, `Entry ${r.i}: `, h('span', { class: 'unverified-mark' }, UNVERIFIED_MARK)),
      h('dl', {}, field('verification', r.unverified.why), field('the line', `${r.unverified.claims} (untrusted: nothing of it is checked)`), field('size (bytes)', String(r.bytes))),
      bytes('as the bundle has it, as text'),
    );
    return;
  }
  put(
    host,
    h('h2', {}, `Entry ${r.i}: ${r.kind}${r.ordinal !== undefined ? ` ${r.ordinal}` : ''}`),
    h(
      'dl',
      {},
      field('entry hash', r.hash),
      field('frame time', r.time === undefined ? undefined : `${fmtTime(r.time)} (${r.time})`),
      field('outcome', r.outcome),
      field('ruling code', r.code),
      field('stage', r.stage),
      field('message', r.message),
      field('agent', r.agent),
      field('action', r.action),
      field('market', r.market),
      field('side', r.side),
      field('size', r.size),
      field('nonce', r.nonce),
      field('signer', r.signer),
      field('stand-down', r.standDown),
      field('replay', r.diverged),
      r.changes && r.changes.length > 0 ? h('div', { class: 'field' }, h('dt', {}, 'what changed'), h('dd', {}, changesList({ index: r.i, kind: 'ruling-diverged', message: '', changes: r.changes }))) : undefined,
      field('ticket transitions', r.transitions ? `${r.transitions.join('; ')} — ${TRANSITIONS_WHY}` : undefined),
      field('quota', r.quota ? `used ${r.quota.used}, locked ${r.quota.locked}, cap ${r.quota.cap}` : undefined),
      field('diagnostics', r.notices?.join('; ')),
      field('size (bytes)', String(r.bytes)),
    ),
    frameSection(r),
    judgeSection(r, replay),
    r.authored !== undefined ? h('details', {}, h('summary', {}, 'authored bytes (text, the beginning)'), h('pre', { class: 'authored' }, r.authored)) : undefined,
    bytes('canonical JSON, as text'),
    h(
      'p',
      { class: 'actions' },
      h('a', { href: `#entry=${r.i}`, class: 'link' }, 'link to this entry'),
      ' ',
      receipt ? (() => {
        const b = h('button', { type: 'button', id: 'download-receipt' }, 'Download receipt (.tlog-proof)');
        b.addEventListener('click', () => receipt(true));
        return b;
      })() : h('span', { class: 'muted' }, 'receipts need a pinned checkpoint'),
      ' ',
      receipt ? (() => {
        const b = h('button', { type: 'button', id: 'show-proof' }, 'Inclusion proof');
        b.addEventListener('click', () => receipt(false));
        return b;
      })() : undefined,
    ),
  );
}

/** Height of one row in px (CSS `li.row` matches it): the list is virtual. */
export const ROW_PX = 28;
const OVERSCAN = 10;

/**
 * The list view, virtual: only the rows in view (plus a few) are in the DOM;
 * the list's padding stands in for the rest, so a 100,000-entry day keeps a
 * few dozen elements. Keyboard: arrows or j/k move, PageUp/PageDown, Home and
 * End jump, Enter or Space opens; the row with focus is the list's one tab stop.
 */
export class Timeline {
  private shown: Row[] = [];
  private cursor = 0;
  private selected = -1;
  private frame = 0;
  /** The element that scrolls (the list's parent); the list's padding stands in for the rows not drawn. */
  private readonly scroller: HTMLElement;
  constructor(
    private readonly list: HTMLElement,
    private readonly pager: HTMLElement,
    private readonly onOpen: (r: Row) => void,
  ) {
    this.scroller = list.parentElement ?? list;
    list.addEventListener('click', (ev) => {
      const li = (ev.target as Element).closest('li[data-i]');
      if (li) this.open(Number(li.getAttribute('data-i')));
    });
    list.addEventListener('keydown', (ev) => this.key(ev));
    this.scroller.addEventListener('scroll', () => {
      if (this.frame !== 0) return;
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.draw(false);
      });
    });
  }

  /** Shows the rows that pass `f`. */
  render(all: readonly Row[], f: Filters): void {
    this.shown = all.filter((r) => matches(r, f));
    this.cursor = Math.min(this.cursor, Math.max(0, this.shown.length - 1));
    put(this.pager, `${this.shown.length} entries`);
    this.draw(false);
  }

  /** Renders the rows in view; `focus` moves focus to the cursor's row. */
  private draw(focus: boolean): void {
    const n = this.shown.length;
    const view = Math.max(ROW_PX, this.scroller.clientHeight);
    const first = Math.max(0, Math.floor(this.scroller.scrollTop / ROW_PX) - OVERSCAN);
    const last = Math.min(n, Math.ceil((this.scroller.scrollTop + view) / ROW_PX) + OVERSCAN);
    const hadFocus = this.list.contains(document.activeElement);
    this.list.style.paddingTop = `${first * ROW_PX}px`;
    this.list.style.paddingBottom = `${(n - last) * ROW_PX}px`;
    const items: HTMLLIElement[] = [];
    for (let k = first; k < last; k++) {
      const r = this.shown[k]!;
      const li = line(r);
      li.setAttribute('aria-posinset', String(k + 1));
      li.setAttribute('aria-setsize', String(n));
      if (r.i === this.selected) li.setAttribute('aria-selected', 'true');
      if (k === this.cursor) li.tabIndex = 0;
      items.push(li);
    }
    put(this.list, ...items);
    // The cursor's row out of view: the first drawn row is the tab stop.
    if (items.length > 0 && (this.cursor < first || this.cursor >= last)) items[0]!.tabIndex = 0;
    if (focus || hadFocus) {
      const at = this.list.querySelector<HTMLElement>(`li[aria-posinset="${this.cursor + 1}"]`);
      at?.focus({ preventScroll: true });
    }
  }

  /** Scrolls so that position `k` is in view, then draws (focusing it). */
  private moveTo(k: number): void {
    const n = this.shown.length;
    if (n === 0) return;
    this.cursor = Math.max(0, Math.min(n - 1, k));
    const top = this.cursor * ROW_PX;
    const view = this.scroller.clientHeight;
    if (top < this.scroller.scrollTop) this.scroller.scrollTop = top;
    else if (top + ROW_PX > this.scroller.scrollTop + view) this.scroller.scrollTop = top + ROW_PX - view;
    this.draw(true);
  }

  /** Opens entry `i` if it is shown (scrolling to it); false when the filter hides it or there is none. */
  open(i: number): boolean {
    const k = this.shown.findIndex((r) => r.i === i);
    if (k < 0) return false;
    this.selected = i;
    this.moveTo(k);
    this.onOpen(this.shown[k]!);
    return true;
  }

  /**
   * Shows the open entry's detail again (the replay added what it found), and
   * leaves the cursor, the scroll and the focus where the grader left them.
   */
  refreshOpen(): void {
    const r = this.shown.find((x) => x.i === this.selected);
    if (r) this.onOpen(r);
  }

  /** The entry open in the detail, if any. */
  get openEntry(): number | undefined {
    return this.selected < 0 ? undefined : this.selected;
  }

  /** Whether entry `i` passes the current filter. */
  isShown(i: number): boolean {
    return this.shown.some((r) => r.i === i);
  }

  /** Forgets the open entry (the detail shows none). */
  close(): void {
    this.selected = -1;
  }

  private key(ev: KeyboardEvent): void {
    const page = Math.max(1, Math.floor(this.scroller.clientHeight / ROW_PX) - 1);
    const at = (document.activeElement as HTMLElement | null)?.closest('li[aria-posinset]');
    if (at) this.cursor = Number(at.getAttribute('aria-posinset')) - 1;
    const moves: Record<string, number> = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1, PageDown: page, PageUp: -page, Home: -Infinity, End: Infinity };
    if (ev.key === 'Enter' || ev.key === ' ') {
      ev.preventDefault();
      const r = this.shown[this.cursor];
      if (r) this.open(r.i);
      return;
    }
    const d = moves[ev.key];
    if (d === undefined) return;
    ev.preventDefault();
    this.moveTo(d === Infinity ? this.shown.length - 1 : d === -Infinity ? 0 : this.cursor + d);
  }
}

/** Fills a `<select>` with the distinct values (first option: all). */
export function options(sel: HTMLSelectElement, values: readonly string[], label: string): void {
  const keep = sel.value;
  put(sel, h('option', { value: '' }, `all ${label}`), ...values.map((v) => h('option', { value: v }, v)));
  if (values.includes(keep)) sel.value = keep;
}

/** The current filters from the form. */
export function readFilters(): Filters {
  return {
    agent: byId<HTMLSelectElement>('f-agent').value,
    action: byId<HTMLSelectElement>('f-action').value,
    code: byId<HTMLSelectElement>('f-code').value,
    diag: byId<HTMLInputElement>('f-diag').checked,
    q: byId<HTMLInputElement>('f-search').value,
  };
}
