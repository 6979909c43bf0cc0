/**
 * `src/web`: the grader's desk. The browser page (src/web/browser, bundled to
 * one HTML file) verifies a day with the protocol's own rules; this side loads
 * the built page for `tally serve` and `tally view`.
 */
export { loadAuditPage, embedDay } from './page.js';
export type { AuditPage, EmbeddedDay } from './page.js';
