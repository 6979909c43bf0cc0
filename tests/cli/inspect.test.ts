import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runDemo, type DemoReport } from '../../src/demo/run.js';
import { planDay } from '../../src/demo/script.js';
import { tally } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-cli-inspect-'));
let report: DemoReport;
let bundle: string;

beforeAll(async () => {
  report = await runDemo({ seed: 3, wakes: 48, out: dir, db: 'memory:' });
  bundle = report.files.bundle;
});

describe('tally inspect (from outside)', () => {
  it('prints the whole day: frames, turns with rulings, notices, the seal, the counts', () => {
    const r = tally(['inspect', bundle]);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^session ${report.sessionId}  "tally-demo seed 3"  agents: alpha, beta`));
    expect(lines.filter((l) => l.startsWith('frame ')).length).toBe(49);
    expect(lines.filter((l) => l.startsWith('turn ')).length).toBe(49);
    expect(r.stdout).toMatch(/^frame +-1 +\d{4}-\d{2}-\d{2}T00:00:00Z +OPEN +BTC-PERP /m);
    expect(r.stdout).toMatch(/^turn +\d+ +alpha +open long [0-9.]+ BTC-PERP +ADMITTED ticket #\d+$/m);
    expect(r.stdout).toMatch(/REJECTED replayed_nonce \(nonce\): /);
    expect(r.stdout).toMatch(/! slot \d+: resubmission → turn-conflict \(refused, nothing written\)/);
    expect(r.stdout).toMatch(/! ticket #\d+: redeem refused: ticket_not_active/);
    expect(r.stdout).toMatch(/tickets: #\d+ released/);
    expect(r.stdout).toMatch(/^seal +commits to the \d+ entries before it/m);
    expect(r.stdout).toContain(`valid, unpinned (internal consistency only; pin with --root or --vkey + --checkpoint): ${report.receipt.size} entries, sealed; receipt root ${report.receipt.receiptRoot}`);
    expect(r.stdout).toMatch(/^quota: [0-9.]+ used \+ [0-9.]+ locked of \d+/m);
  });

  it('counts ticket transitions as the referee applied them: the same totals as the demo summary', () => {
    const r = tally(['inspect', bundle]);
    const line = r.stdout.split('\n').find((l) => l.startsWith('ticket transitions: '));
    expect(line).toBeDefined();
    const counted = Object.fromEntries(
      line!
        .slice('ticket transitions: '.length)
        .split(', ')
        .map((kv) => {
          const at = kv.lastIndexOf(' ');
          return [kv.slice(0, at), Number(kv.slice(at + 1))];
        }),
    );
    expect(counted).toEqual(report.referee.transitions);
    // The double fill is refused: one report that is not a redemption.
    expect(counted['ticket_not_active']).toBe(1);
  });

  it('filters by agent, action and ruling (admitted, rejected, a code, a stand-down class, a diagnostic)', () => {
    const turnLines = (args: string[]) => tally(['inspect', bundle, ...args]).stdout.split('\n').filter((l) => l.startsWith('turn '));
    const beta = turnLines(['--agent', 'beta']);
    expect(beta.length).toBeGreaterThan(0);
    for (const l of beta) expect(l).toMatch(/^turn +\d+ +beta /);
    for (const l of turnLines(['--action', 'transfer'])) expect(l).toMatch(/ transfer /);
    const rejected = turnLines(['--ruling', 'rejected']);
    expect(rejected.length).toBe(report.counts.rejected);
    for (const l of rejected) expect(l).toContain('REJECTED');
    expect(turnLines(['--ruling', 'admitted']).length).toBe(report.counts.admitted);
    expect(turnLines(['--ruling', 'expired'])).toHaveLength(1);
    // A panel answer's code or failure matches too: the injection (3 denials), the 2-of-3 and the 1-of-3 splits.
    expect(turnLines(['--ruling', 'judge_denied'])).toHaveLength(3);
    expect(turnLines(['--ruling', 'judge_untrusted_signer'])).toHaveLength(1);
    // The stand-down of class timeout and the judge that timed out.
    expect(turnLines(['--ruling', 'timeout']).length).toBeGreaterThanOrEqual(2);
    expect(turnLines(['--agent', 'mallory', '--ruling', 'unknown_signer'])).toHaveLength(1);
    const conflict = tally(['inspect', bundle, '--ruling', 'turn-conflict']).stdout;
    expect(conflict).toMatch(/! slot \d+: resubmission → turn-conflict/);
    expect(conflict).toContain('1 row matches');
  });

  it('--json prints {verdict, counts, rows} that parse, filters included', () => {
    const all = JSON.parse(tally(['inspect', bundle, '--json']).stdout) as { verdict: { ok: boolean; receiptRoot: string }; counts: { turns: number }; rows: unknown[] };
    expect(all.verdict).toMatchObject({ ok: true, receiptRoot: report.receipt.receiptRoot });
    expect(all.rows).toHaveLength(report.receipt.size);
    expect(all.counts.turns).toBe(49);
    const acts = planDay(3, 48).acts;
    const rejected = JSON.parse(tally(['inspect', bundle, '--json', '--ruling', 'rejected']).stdout) as { rows: { kind: string; ordinal: number }[] };
    for (const r of rejected.rows) expect(acts.has(r.ordinal), `wake ${r.ordinal}`).toBe(true);
  });

  it('a tampered bundle: the timeline up to the bad entry, then exit 1 naming it', () => {
    const text = readFileSync(bundle, 'utf8').split('\n');
    text[20] = text[20]!.replace('"ordinal":', '"ordinal": ');
    const bad = join(dir, 'tampered.jsonl');
    writeFileSync(bad, text.join('\n'));
    const r = tally(['inspect', bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^invalid: entry 20: not-canonical: /);
    expect(r.stdout.split('\n').filter((l) => /^(frame|turn) /.test(l)).length).toBe(19);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('usage and I/O errors; --help', () => {
    for (const [args, code] of [[['inspect'], 2], [['inspect', bundle, bundle], 2], [['inspect', bundle, '--colour'], 2], [['inspect', join(dir, 'missing.jsonl')], 3]] as const) {
      const r = tally([...args]);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code);
      expect(r.stderr).toMatch(/^tally inspect: /);
    }
    const h = tally(['inspect', '--help']);
    expect(h.code).toBe(0);
    expect(h.stdout).toContain('Usage: tally inspect <bundle.jsonl>');
  });
});
