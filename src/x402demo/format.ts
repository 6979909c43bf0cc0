/** The x402 demo's summary for people (`tally demo --x402`): a pure function from the report to lines. */
import type { X402DemoReport } from './run.js';

function list(m: Readonly<Record<string, number>>): string {
  const entries = Object.entries(m).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return entries.length === 0 ? 'none' : entries.map(([k, v]) => `${k} ${v}`).join(', ');
}

/** The summary; `tally` is how the hints spell the command, `rel` shows a path as typed. */
export function formatX402Report(r: X402DemoReport, tally = 'tally', rel: (p: string) => string = (p) => p): string[] {
  const f = (k: string) => rel(r.files[k]!);
  const check = (name: string, c: { ok: boolean; detail: string }) => `${name} ${c.ok ? 'ok' : 'FAILED'} (${c.detail})`;
  const b = r.budget;
  const evidence = r.checks.evidence;
  return [
    `tally demo --x402: an x402 desk paying for market data on a local chain (${r.chain.url}, token ${r.chain.token})`,
    '',
    `  session       ${r.sessionId}`,
    ...r.steps.map((s, i) => `  ${i === 0 ? 'steps' : '     '}         ${s.what}: ${s.outcome}`),
    `  rulings       ${list(r.rulings)}`,
    `  lifecycle     final ${list(r.lifecycle.final)}; ${r.lifecycle.everUnknown} recorded UNKNOWN then reconciled from chain evidence`,
    `  budget        ${b ? `${b.used} used + ${b.locked} locked of ${b.budget} (${b.free} free, atomic units)` : 'none'}`,
    `  receipt root  ${r.receiptRoot}`,
    '',
    `  ${check('bundle', r.checks.bundle)}`,
    `  ${check('receipt', r.checks.receipt)}`,
    ...evidence.map((e) => `  ${check(`evidence ${rel(e.file)}`, e)}`),
    '',
    `  next          ${tally} verify ${f('bundle')} --vkey "$(cat ${f('verifierKey')})" --checkpoint ${f('checkpoint')}`,
    `                ${tally} replay ${f('bundle')} --vkey "$(cat ${f('verifierKey')})" --checkpoint ${f('checkpoint')}`,
    ...evidence.map((e) => `                ${tally} verify-evidence ${rel(e.file)} --vkey "$(cat ${f('verifierKey')})"`),
  ];
}
