/**
 * docs/vectors/evidence.json (PROTOCOL.md §16.9, §17.8): every AP2 and x402 evidence pack of the
 * corpus gets its expected answer from the library's checkers (verifyAp2Evidence,
 * verifyPaymentEvidence) and from `tally verify-evidence --json` (in process, and the valid AP2
 * pack through the binary too): the refusal code, or the facts the corpus pins, and the exit code
 * (0 only for a complete AP2 pack or an x402 pack that verifies).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyAp2Evidence } from '../../src/mandates/index.js';
import { verifyPaymentEvidence } from '../../src/payments/index.js';
import { inProcess } from '../cli/in-process.js';
import { tally } from '../cli/helpers.js';
import { loadVectors } from './corpus.js';

interface Case { name: string; note: string; pack: Record<string, unknown>; verifier: 'engine' | 'other'; expect: Record<string, unknown> & { ok: boolean; code?: string } }
interface Vectors { keys: Record<'engine' | 'other', string>; ap2: Case[]; x402: Case[] }
const V = loadVectors<Vectors>('evidence.json');
const dir = mkdtempSync(join(tmpdir(), 'tally-evidence-vectors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Step = { step: number; name: string; outcome: string; code?: string };
/** The part of an answer the corpus pins (as the generator writes it). */
function pinned(kind: 'ap2' | 'x402', r: Record<string, unknown>): Record<string, unknown> {
  if (r['ok'] !== true) return { ok: false, code: r['code'] };
  if (kind === 'ap2') {
    return { ok: true, admitted: r['admitted'], ...(r['amount'] === undefined ? {} : { amount: r['amount'], currency: r['currency'] }), complete: r['complete'], steps: (r['steps'] as Step[]).map((s) => ({ step: s.step, name: s.name, outcome: s.outcome, ...(s.code === undefined ? {} : { code: s.code }) })) };
  }
  return { ok: true, state: r['state'] ?? null, reasons: r['reasons'], rederived: r['rederived'], admitted: (r['payment'] as { admitted: boolean }).admitted };
}
const exitOf = (kind: 'ap2' | 'x402', e: Case['expect']) => (e.ok && (kind === 'x402' || e['complete'] === true) ? 0 : 1);

describe('evidence pack vectors (docs/vectors/evidence.json)', () => {
  it('cover valid packs and each refusal of verify-evidence, AP2 and x402', () => {
    const codes = (cs: Case[]) => new Set(cs.map((c) => (c.expect.ok ? 'ok' : c.expect.code)));
    expect([...codes(V.ap2)].sort()).toEqual(['evidence-inclusion', 'evidence-malformed', 'ok']);
    expect([...codes(V.x402)].sort()).toEqual(['evidence_malformed', 'ok', 'receipt_invalid']);
    // AP2 packs that verify: complete, and each way a step does not pass (missing, receipt-reference).
    const outcomes = new Set(V.ap2.filter((c) => c.expect.ok).flatMap((c) => (c.expect['steps'] as Step[]).map((s) => s.code ?? s.outcome)));
    for (const o of ['pass', 'missing', 'receipt-reference']) expect(outcomes).toContain(o);
    expect(new Set(V.x402.filter((c) => c.expect.ok).map((c) => c.expect['state']))).toEqual(new Set(['SETTLED', 'RESERVED', null]));
  });

  for (const kind of ['ap2', 'x402'] as const) {
    it.each(V[kind].map((c) => [c.name, c] as const))(`${kind} %s: the library's checker and tally verify-evidence --json`, async (_n, c) => {
      const vkey = V.keys[c.verifier];
      const lib = kind === 'ap2' ? await verifyAp2Evidence(c.pack, { verifiers: [vkey] }) : await verifyPaymentEvidence(c.pack, { verifiers: [vkey] });
      expect(pinned(kind, lib as unknown as Record<string, unknown>), lib.ok ? '' : lib.message).toEqual(c.expect);
      const file = join(dir, `${kind}-${c.name}.json`);
      writeFileSync(file, JSON.stringify(c.pack));
      const cli = await inProcess(['verify-evidence', file, '--vkey', vkey, '--json']);
      expect(cli.code, cli.stderr).toBe(exitOf(kind, c.expect));
      // The CLI recognises an AP2 pack by its format; a pack of any other format is checked as x402 (evidence_malformed).
      const cliExpect = kind === 'ap2' && c.pack['format'] !== 'tally/ap2-evidence/1' ? { ok: false, code: 'evidence_malformed' } : c.expect;
      expect(pinned(kind, JSON.parse(cli.stdout) as Record<string, unknown>)).toEqual(cliExpect);
    });
  }

  it('the binary gives the valid AP2 pack all five steps and exit 0, and a refused one exit 1 with its code', () => {
    const ok = V.ap2.find((c) => c.name === 'admitted-complete')!;
    writeFileSync(join(dir, 'bin-ok.json'), JSON.stringify(ok.pack));
    const r = tally(['verify-evidence', 'bin-ok.json', '--vkey', V.keys.engine], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/valid: all five dispute steps pass$/m);
    const bad = V.ap2.find((c) => c.name === 'ruling-tampered')!;
    writeFileSync(join(dir, 'bin-bad.json'), JSON.stringify(bad.pack));
    const b = tally(['verify-evidence', 'bin-bad.json', '--vkey', V.keys.engine], { cwd: dir });
    expect(b.code).toBe(1);
    expect(b.stderr).toContain('invalid: evidence-inclusion');
  }, 60_000);
});
