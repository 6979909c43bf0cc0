/**
 * The evidence-pack opener: a grader picks a `tally evidence --payment` pack
 * and the page checks it in a worker of its own (pack.ts: the one rule of
 * `tally verify-evidence`, with the engine key from the load form, and its
 * witness policy when given), then shows what it proves or the code and
 * reason it was refused with. Every string from the pack reaches the DOM as
 * text only (dom.ts `h`).
 */
import { byId, h, put } from './dom.js';
import type { FromWorker, PackReport, ToWorker } from './messages.js';
import VerifyWorker from './worker.ts?worker&inline';

let worker: Worker | undefined;

/** Shows a pack's report in `host`. */
export function showPackReport(host: HTMLElement, r: PackReport, ms: number): void {
  host.hidden = false;
  host.setAttribute('data-state', r.state);
  host.className = `pack ${r.state}`;
  if (r.state === 'refused') {
    host.setAttribute('data-code', r.code);
    put(host, h('h2', {}, 'Evidence pack'), h('p', {}, h('strong', {}, `Refused: ${r.code}`), ` — ${r.stage}: ${r.message}`), h('p', { class: 'muted' }, 'Checked with the code of tally verify-evidence; it exits 1 with the same code.'));
    return;
  }
  host.removeAttribute('data-code');
  host.setAttribute('data-reasons', r.reasons.join(' '));
  host.setAttribute('data-final', r.final);
  const field = (k: string, v: string): HTMLElement => h('div', { class: 'field', 'data-field': k }, h('dt', {}, k), h('dd', {}, v));
  put(
    host,
    h('h2', {}, 'Evidence pack'),
    h('p', {}, h('strong', {}, 'Verified'), ` — payment ${r.paymentHash} in session ${r.session}, every receipt under its checkpoint (size ${r.size}) signed by the pinned engine key · ${(ms / 1000).toFixed(2)} s`),
    h(
      'dl',
      { class: 'pack-fields' },
      field('mandate signed by', r.principal),
      field('ruling', `${r.ruling} (${r.rederived ? 're-derived from the pack' : 'as recorded: it depends on earlier entries'})`),
      field('settlement facts', r.settlements.length === 0 ? 'none' : r.settlements.join(' · ')),
      field('final state', `${r.final}${r.transaction === undefined ? '' : ` (${r.transaction})`}`),
      field('dispute reasons', r.reasons.length === 0 ? 'none' : r.reasons.join(', ')),
      r.witnessed === undefined ? undefined : field('cosigned by', `${r.witnessed.signed.join(', ')} (witness quorum met)`),
    ),
  );
}

/** Reads the pack and the keys from the load form and checks the pack. */
async function checkChosenPack(): Promise<void> {
  const host = byId('pack');
  const file = byId<HTMLInputElement>('in-pack').files?.[0];
  if (file === undefined) return showPackReport(host, { state: 'refused', stage: 'input', code: 'no-pack', message: 'pick an evidence pack first' }, 0);
  const k = byId<HTMLInputElement>('in-key').files?.[0];
  const keyText = byId<HTMLInputElement>('in-key-text').value.trim();
  const p = byId<HTMLInputElement>('in-policy').files?.[0];
  const vkey = k ? await k.text() : keyText !== '' ? keyText : undefined;
  const msg: ToWorker = { type: 'evidence', pack: await file.text(), ...(vkey === undefined ? {} : { vkey }), ...(p ? { policy: await p.text() } : {}) };
  host.hidden = false;
  host.setAttribute('data-state', 'running');
  put(host, h('h2', {}, 'Evidence pack'), h('p', {}, 'Checking…'));
  worker?.terminate();
  const w = new VerifyWorker();
  worker = w;
  w.onmessage = (ev: MessageEvent<FromWorker>) => {
    if (ev.data.type !== 'evidence-checked' || w !== worker) return;
    showPackReport(host, ev.data.report, ev.data.ms);
    w.terminate();
    worker = undefined;
  };
  w.postMessage(msg);
}

/** Binds the pack opener's button. */
export function bindPackOpener(): void {
  byId('check-pack').addEventListener('click', () => void checkChosenPack());
}
