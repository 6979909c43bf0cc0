/**
 * The replay panel: what `replay` (the code of `tally replay`) said about the
 * day, run in the worker after verification. It says plainly what the page
 * re-derived, what it took on trust, and which entries diverged (each links to
 * its entry; the timeline marks them).
 */
import { h, put } from './dom.js';
import type { ReplayDivergenceView, ReplayReport } from './messages.js';

/** The changed fields of a divergence: `ruling.quota.cap: recorded "999999", re-derived "146"`, values highlighted. */
export function changesList(d: ReplayDivergenceView): HTMLElement | undefined {
  if (d.changes.length === 0) return undefined;
  return h(
    'ul',
    { class: 'changes' },
    ...d.changes.map((c) => h('li', { 'data-path': c.path }, h('code', { class: 'path' }, c.path), ': recorded ', h('code', { class: 'was' }, c.recorded), ', re-derived ', h('code', { class: 'now' }, c.rederived))),
  );
}

/** Entries at or below this size replay on their own after verification; larger days on request. */
export const AUTO_REPLAY_ENTRIES = 20_000;

const LIMITS =
  'Re-derived here with the code of tally replay: every intent signature (secp256k1), nonce, TTL, mandate and ticket rule, and on a payment day every x402 payment rule (EIP-712 signature, offer, payee, budget, settlement lifecycle). Judge verdicts are re-verified from their recorded signatures; the page never asks a judge again, so a verdict the transcript does not carry cannot be re-derived here.';

/** Shows the replay control before a run: automatic for small days, a button for large ones. */
export function showReplayIdle(host: HTMLElement, entries: number, run: () => void): void {
  host.setAttribute('data-state', 'idle');
  host.className = 'replay idle';
  const b = h('button', { type: 'button', id: 'replay-run' }, 'Replay every ruling');
  b.addEventListener('click', run);
  put(host, h('h2', {}, 'Replay'), h('p', {}, `${entries} entries: replay re-derives every ruling in this browser (it keeps the day in memory). `, b), h('p', { class: 'muted' }, LIMITS));
}

/** Shows replay progress. */
export function showReplayRunning(host: HTMLElement, entries: number, total: number): void {
  host.setAttribute('data-state', 'running');
  host.className = 'replay running';
  put(host, h('h2', {}, 'Replay'), h('p', {}, `Replaying… ${entries} of ${total} entries`));
}

/** Shows the outcome; `link(i)` builds the link to entry `i`. */
export function showReplayReport(host: HTMLElement, r: ReplayReport, ms: number): void {
  host.setAttribute('data-state', r.state);
  host.setAttribute('data-divergences', String(r.divergences.length));
  host.setAttribute('data-ruler', r.ruler);
  host.setAttribute('data-ms', ms.toFixed(1));
  host.className = `replay ${r.state}`;
  const took = `ruler ${r.ruler} · ${(ms / 1000).toFixed(2)} s in the browser`;
  const facts =
    r.facts.length === 0
      ? undefined
      : h(
          'div',
          {},
          h('p', {}, `Taken from the transcript, not re-derived (one bundle cannot show another session; replay that session to check): ${r.facts.length}`),
          h('ul', { class: 'facts' }, ...r.facts.map((f) => h('li', {}, h('a', { href: `#entry=${f.index}` }, `entry ${f.index}`), `: ${f.text}`))),
        );
  if (r.state === 'replayed') {
    put(host, h('h2', {}, 'Replay'), h('p', {}, h('strong', {}, 'Every ruling re-derived'), ` — ${r.turns} turns replayed, ${r.rulings} rulings identical, 0 divergences · ${took}`), facts, h('p', { class: 'muted' }, LIMITS));
    return;
  }
  if (r.state === 'error') {
    put(host, h('h2', {}, 'Replay'), h('p', {}, h('strong', {}, 'Replay could not run'), ` — ${r.error ?? 'unknown error'} (tally replay stops with the same error)`));
    return;
  }
  if (r.state === 'chain') {
    put(host, h('h2', {}, 'Replay'), h('p', {}, h('strong', {}, `Not replayed: the chain fails at entry ${r.chain?.index ?? '?'} (${r.chain?.code ?? '?'})`)));
    return;
  }
  put(
    host,
    h('h2', {}, 'Replay'),
    h('p', {}, h('strong', {}, `Diverged: ${r.divergences.length} entr${r.divergences.length === 1 ? 'y' : 'ies'} not re-derived`), `${r.stoppedAt === undefined ? '' : ` (stopped at entry ${r.stoppedAt})`} — the first is the root cause · ${took}`),
    h(
      'ol',
      { class: 'divergences' },
      ...r.divergences.map((d) =>
        h(
          'li',
          { 'data-index': String(d.index), 'data-kind': d.kind },
          h('a', { href: `#entry=${d.index}`, 'data-entry': String(d.index) }, `entry ${d.index}`),
          `: ${d.kind}: ${d.message}`,
          changesList(d),
          d.recorded === undefined && d.rederived === undefined
            ? undefined
            : h(
                'details',
                { class: 'whole' },
                h('summary', {}, d.changes.length > 0 ? 'both values whole (canonical JSON)' : 'recorded and re-derived'),
                d.recorded === undefined ? undefined : h('div', {}, 'recorded ', h('code', {}, d.recorded)),
                d.rederived === undefined ? undefined : h('div', {}, 're-derived ', h('code', {}, d.rederived)),
              ),
        ),
      ),
    ),
    facts,
    h('p', { class: 'muted' }, LIMITS),
  );
}
