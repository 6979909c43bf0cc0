/**
 * The timeline: filters (agent, action, ruling code, diagnostics), search
 * (nonce, hash, index), a paged list of entries with keyboard navigation, and
 * the detail of one entry. Every field is untrusted bundle text and reaches
 * the DOM only as text nodes.
 */
import { byId, h, put } from './dom.js';
import type { Row } from './rows.js';

const PAGE = 200;

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

/** One line of the list. */
function line(r: Row): HTMLLIElement {
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
    h('span', { class: `code ${r.outcome ?? ''}` }, r.code ?? ''),
    r.notices ? h('span', { class: 'diag', title: r.notices.join('; ') }, `⚑ ${r.notices.length}`) : undefined,
    r.diverged ? h('span', { class: 'diverged-mark' }, 'diverged') : undefined,
  );
  return li;
}

function field(name: string, value: string | undefined): HTMLElement | undefined {
  if (value === undefined || value === '') return undefined;
  return h('div', { class: 'field' }, h('dt', {}, name), h('dd', {}, value));
}

/** The detail panel of one entry. */
export function renderDetail(host: HTMLElement, r: Row, receipt: ((download: boolean) => void) | undefined): void {
  const v = r.verdict;
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
      field('judge', v ? `${v.decision ?? v.code ?? '?'}${v.message ? ` — ${v.message}` : ''}` : undefined),
      field('judge signature', v ? (v.signed ? `present (signer ${v.signer ?? '?'}); re-verified by the replay below` : 'absent') : undefined),
      field('replay', r.diverged),
      field('ticket transitions', r.transitions?.join('; ')),
      field('quota', r.quota ? `used ${r.quota.used}, locked ${r.quota.locked}, cap ${r.quota.cap}` : undefined),
      field('diagnostics', r.notices?.join('; ')),
      field('size (bytes)', String(r.bytes)),
    ),
    r.authored !== undefined ? h('details', {}, h('summary', {}, 'authored bytes (text)'), h('pre', { class: 'authored' }, r.authored)) : undefined,
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

/** The list view with paging and keyboard navigation. */
export class Timeline {
  private shown: Row[] = [];
  private page = 0;
  constructor(
    private readonly list: HTMLElement,
    private readonly pager: HTMLElement,
    private readonly onOpen: (r: Row) => void,
  ) {
    list.addEventListener('click', (ev) => {
      const li = (ev.target as Element).closest('li[data-i]');
      if (li) this.open(Number(li.getAttribute('data-i')));
    });
    list.addEventListener('keydown', (ev) => this.key(ev));
  }

  /** Shows the rows that pass `f`. */
  render(all: readonly Row[], f: Filters): void {
    this.shown = all.filter((r) => matches(r, f));
    this.page = Math.min(this.page, Math.max(0, Math.ceil(this.shown.length / PAGE) - 1));
    this.draw();
  }

  private draw(): void {
    const start = this.page * PAGE;
    const slice = this.shown.slice(start, start + PAGE);
    put(this.list, ...slice.map(line));
    const first = this.list.firstElementChild as HTMLElement | null;
    if (first) first.tabIndex = 0;
    const pages = Math.max(1, Math.ceil(this.shown.length / PAGE));
    const prev = h('button', { type: 'button' }, '‹ previous');
    const next = h('button', { type: 'button' }, 'next ›');
    prev.disabled = this.page === 0;
    next.disabled = this.page + 1 >= pages;
    prev.addEventListener('click', () => this.go(this.page - 1));
    next.addEventListener('click', () => this.go(this.page + 1));
    put(this.pager, prev, ` ${this.shown.length} entries · page ${this.page + 1} of ${pages} `, next);
  }

  private go(p: number): void {
    this.page = p;
    this.draw();
  }

  /** Opens entry `i` if it is shown (moving to its page). */
  open(i: number): void {
    const k = this.shown.findIndex((r) => r.i === i);
    if (k < 0) return;
    const page = Math.floor(k / PAGE);
    if (page !== this.page) this.go(page);
    const li = this.list.querySelector<HTMLElement>(`li[data-i="${i}"]`);
    this.list.querySelectorAll('li[aria-selected]').forEach((x) => x.removeAttribute('aria-selected'));
    if (li) {
      li.setAttribute('aria-selected', 'true');
      li.focus();
    }
    this.onOpen(this.shown[k]!);
  }

  private key(ev: KeyboardEvent): void {
    const cur = (document.activeElement as HTMLElement | null)?.closest('li[data-i]') as HTMLElement | null;
    if (!cur) return;
    let target: Element | null = null;
    if (ev.key === 'ArrowDown' || ev.key === 'j') target = cur.nextElementSibling;
    else if (ev.key === 'ArrowUp' || ev.key === 'k') target = cur.previousElementSibling;
    else if (ev.key === 'Home') target = this.list.firstElementChild;
    else if (ev.key === 'End') target = this.list.lastElementChild;
    else if (ev.key === 'Enter' || ev.key === ' ') {
      ev.preventDefault();
      this.open(Number(cur.getAttribute('data-i')));
      return;
    } else return;
    ev.preventDefault();
    if (target instanceof HTMLElement) {
      cur.tabIndex = -1;
      target.tabIndex = 0;
      target.focus();
    }
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
