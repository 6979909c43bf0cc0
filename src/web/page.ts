/**
 * The built audit page on the Node side: where `npm run build` put it, its
 * Content-Security-Policy, and the copy `tally view` writes with a day's
 * files embedded. The page itself is src/web/browser (bundled by vite into one
 * HTML file: scripts/build-web.mjs).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TallyError, toBase64 } from '../protocol/index.js';

/** The built page and the policy it must be served with. */
export interface AuditPage {
  /** The single self-contained HTML file. */
  readonly html: string;
  /** The Content-Security-Policy header value (also in the page's own meta tag). */
  readonly csp: string;
}

const CANDIDATES = ['./index.html', '../../dist/web/index.html'];

/** Loads the built page (dist/web/index.html). Throws `TALLY_WEB_NOT_BUILT` when it is missing. */
export function loadAuditPage(): AuditPage {
  for (const rel of CANDIDATES) {
    const html = fileURLToPath(new URL(rel, import.meta.url));
    const csp = fileURLToPath(new URL(rel.replace('index.html', 'csp.txt'), import.meta.url));
    if (existsSync(html) && existsSync(csp)) return { html: readFileSync(html, 'utf8'), csp: readFileSync(csp, 'utf8').trim() };
  }
  throw new TallyError('TALLY_WEB_NOT_BUILT', 'The audit page is not built.', { details: 'run npm run build (it writes dist/web/index.html)' });
}

/** The files `tally view` embeds. */
export interface EmbeddedDay {
  /** Shown as the day's name (file name of the bundle). */
  readonly name: string;
  /** The bundle's exact bytes (base64 in the page, so any byte survives). */
  readonly bundle: Uint8Array;
  /** Receipt note or tlog-proof text. */
  readonly checkpoint?: string;
  /** Verifier key text (one key a line). */
  readonly key?: string;
  /** Witness policy text (Sigsum format). */
  readonly policy?: string;
  /** The day's log binding (a tlog-proof, PROTOCOL.md §15.5). */
  readonly logProof?: string;
  /** The engine log's verifier key text (one key a line): the page then requires the binding. */
  readonly logKey?: string;
}

/**
 * The page with `day` embedded as a JSON data block (never executed; `<` is
 * escaped so no text can close the block). The page verifies it on load.
 */
export function embedDay(page: AuditPage, day: EmbeddedDay): string {
  const json = JSON.stringify({
    name: day.name,
    bundle: toBase64(day.bundle),
    ...(day.checkpoint === undefined ? {} : { checkpoint: day.checkpoint }),
    ...(day.key === undefined ? {} : { key: day.key }),
    ...(day.policy === undefined ? {} : { policy: day.policy }),
    ...(day.logProof === undefined ? {} : { logProof: day.logProof }),
    ...(day.logKey === undefined ? {} : { logKey: day.logKey }),
  }).replace(/</g, '\\u003c');
  const at = page.html.indexOf('<body>');
  if (at < 0) throw new TallyError('TALLY_WEB_NOT_BUILT', 'The audit page has no body.');
  const end = at + '<body>'.length;
  return `${page.html.slice(0, end)}\n<script type="application/json" id="tally-embedded">${json}</script>${page.html.slice(end)}`;
}
