/**
 * The summary `tally demo --ap2` prints: the mandate's budget, each purchase
 * as ruled, the checks, the files and the next commands to run.
 */
import type { Ap2DemoReport } from './ap2.js';

const usd = (minor: number): string => `USD ${(minor / 100).toFixed(2)}`;

/** The AP2 demo summary; `tally` is how the hints spell the command (`npx tally` under npm). */
export function formatAp2Report(r: Ap2DemoReport, tally = 'tally'): string[] {
  const check = (name: string, ch: { ok: boolean; detail: string }) => `  ${name.padEnd(9)} ${ch.ok ? 'ok' : 'FAILED'} (${ch.detail})`;
  const rel = (f: string) => f.slice(r.files.dir.length).replace(/^[\\/]/, '');
  return [
    `tally demo --ap2: a day under an AP2 open payment mandate (${r.mode === 'new' ? 'recorded now' : 'already sealed in this store: reused, nothing written'})`,
    '',
    `  session       ${r.sessionId}`,
    `  mandate       ${r.mandate} (mandate.payment.open.1, budget ${r.budget.max} ${r.budget.currency} = ${r.budget.minor} minor units)`,
    ...r.purchases.map((p, i) => `  purchase ${i}    ${p.sku.padEnd(20)} ${usd(p.amount).padStart(10)}  ${p.admitted ? 'ADMITTED' : `REFUSED ${p.code}${p.violations?.length ? ` (${p.violations.join(', ')})` : ''}`}, spent before ${usd(p.spentBefore)}`),
    `  spent         ${usd(r.budget.spent)} of ${usd(r.budget.minor)}`,
    `  receipt root  ${r.receipt.receiptRoot}`,
    '',
    check('bundle', r.checks.bundle),
    check('receipt', r.checks.receipt),
    check('replay', r.checks.replay),
    check('evidence', r.checks.evidence) + `: transaction ${r.checks.evidence.transactionId}`,
    check('proof', r.checks.proof),
    '',
    `  files         ${r.files.dir}/: ${[r.files.db, r.files.bundle, r.files.checkpoint, r.files.verifierKey, r.files.evidence, r.files.proof, r.files.summary].map(rel).join(', ')}`,
    '',
    `  next          ${tally} verify ${r.files.bundle} --vkey ${r.verifierKey} --checkpoint ${r.files.checkpoint}`,
    `                ${tally} replay ${r.files.bundle}`,
    `                ${tally} verify-proof ${r.files.proof} --vkey ${r.verifierKey} --checkpoint ${r.files.checkpoint}`,
    `                ${tally} verify-evidence ${r.files.evidence} --vkey ${r.verifierKey}`,
  ];
}
