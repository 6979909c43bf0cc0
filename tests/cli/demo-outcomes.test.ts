/**
 * Issue 17, from outside: the default demo day shows every referee outcome —
 * a quota breach, the transaction cap, the judge rate, the principal's
 * termination, the panel's 2-of-3 and 1-of-3 splits (who said what), a judge
 * that timed out and one whose answer a stranger's key signed — in the
 * summary `tally demo` prints and in `tally inspect`; the bundle verifies
 * pinned to its root and replays with every ruling re-derived.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tally } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-cli-outcomes-'));
const day = join(dir, 'day');
const bundle = join(day, 'bundle.jsonl');

/** The value of a `key  a 1, b 2` list line as a map. */
function listOf(text: string, prefix: RegExp): Record<string, number> {
  const line = text.split('\n').find((l) => prefix.test(l));
  if (line === undefined) throw new Error(`no line ${prefix}`);
  return Object.fromEntries(line.replace(prefix, '').split(', ').map((x) => {
    const at = x.lastIndexOf(' ');
    return [x.slice(0, at).trim(), Number(x.slice(at + 1))];
  }));
}

describe('every referee outcome of the demo day (tally demo, tally inspect, tally replay)', () => {
  const demo = tally(['demo', '--out', day, '--db', 'memory:']);

  it('tally demo: exit 0, every check ok, and the summary counts each outcome by code and the panel by split', () => {
    expect(demo.code, demo.stderr).toBe(0);
    for (const check of ['bundle', 'receipt', 'replay', 'proof']) expect(demo.stdout).toMatch(new RegExp(`^  ${check} ok \\(`, 'm'));
    expect(listOf(demo.stdout, /^ {2}rejected {6}/)).toMatchObject({ quota_exhausted: 1, tx_cap_reached: 1, judge_rate_limited: 1, mandate_terminated: 1, judge_quorum_not_met: 2 });
    expect(demo.stdout).toMatch(/^ {2}tickets .*terminate 1/m);
    expect(demo.stdout).toMatch(/^ {2}judges {8}\d+ verdicts, \d+ allowed; panel splits .*2 of 3 allow → admitted 4.*1 of 3 allow → denied 1/m);
    expect(listOf(demo.stdout, /^ {2}answers {7}/)).toMatchObject({ timeout: 1, judge_untrusted_signer: 1, judge_unparsable: 1, judge_denied: 6 });
    expect(demo.stdout).toMatch(/^ {2}referee .*, (\d+) of \1 transactions$/m);
  });

  const inspect = tally(['inspect', bundle]);

  it('tally inspect: exit 0; the counts by code, the splits and the answers; who said what on each split; the close', () => {
    expect(inspect.code, inspect.stderr).toBe(0);
    expect(listOf(inspect.stdout, /^rejected by code: /)).toMatchObject({ quota_exhausted: 1, tx_cap_reached: 1, judge_rate_limited: 1, mandate_terminated: 1, judge_quorum_not_met: 2 });
    expect(listOf(inspect.stdout, /^panel splits: /)).toMatchObject({ '2 of 3 allow → admitted': 4, '1 of 3 allow → denied': 1, '0 of 3 allow → denied': 1 });
    expect(listOf(inspect.stdout, /^judge answers: /)).toMatchObject({ timeout: 1, judge_untrusted_signer: 1, judge_unparsable: 1 });
    expect(listOf(inspect.stdout, /^ticket transitions: /)).toMatchObject({ terminate: 1 });
    const out = inspect.stdout;
    expect(out).toMatch(/^ +panel 1 of 3 allow → denied \(quorum 2\): tally-local-rules-v1 ALLOW · tally-local-sceptic-v1 judge_denied \(The proposal rests on a tip.*\) · tally-local-cautious-v1 judge_denied \(The order is placed without a stop.*\)$/m);
    expect(out).toMatch(/^ +panel 2 of 3 allow → admitted \(quorum 2\): tally-local-rules-v1 ALLOW · tally-local-sceptic-v1 ALLOW · tally-local-cautious-v1 judge_denied \(/m);
    expect(out).toMatch(/^ +panel 2 of 3 allow → admitted \(quorum 2\): .*tally-local-cautious-v1 timeout \(no answer within 250 ms\)$/m);
    expect(out).toMatch(/^ +panel 2 of 3 allow → admitted \(quorum 2\): tally-local-rules-v1 judge_untrusted_signer \(verdict signer 0x[0-9a-f]{8}/m);
    expect(out).toMatch(/^turn +\d+ +\w+ .* REJECTED judge_rate_limited \(verdict\): wallet 0x[0-9a-f]{6}/m);
    expect(out).toMatch(/^turn +\d+ +\w+ .* REJECTED quota_exhausted \(policy\): weight 5000 does not fit/m);
    expect(out).toMatch(/^turn +46 +\w+ +transfer 25 .* REJECTED tx_cap_reached \(policy\): used (\d+) \+ locked 0 transactions reach the cap \1$/m);
    expect(out).toMatch(/^frame +47 .*tickets: .*mandate terminated$/m);
    expect(out).toMatch(/^turn +47 +\w+ .* REJECTED mandate_terminated \(policy\): the principal terminated the mandate at frame 47$/m);
  });

  it('tally inspect --ruling finds a turn by a panel answer or a policy code; --json carries the panel', () => {
    const rows = (ruling: string) => tally(['inspect', bundle, '--ruling', ruling]).stdout.split('\n').filter((l) => l.startsWith('turn '));
    expect(rows('judge_untrusted_signer')).toHaveLength(1);
    expect(rows('judge_untrusted_signer')[0]).toContain('ADMITTED');
    expect(rows('tx_cap_reached')).toHaveLength(1);
    expect(rows('judge_quorum_not_met')).toHaveLength(2);
    const j = JSON.parse(tally(['inspect', bundle, '--json', '--ruling', 'judge_rate_limited']).stdout) as { rows: { ordinal: number }[] };
    expect(j.rows).toHaveLength(1);
    const split = JSON.parse(tally(['inspect', bundle, '--json', '--ruling', 'judge_quorum_not_met']).stdout) as { rows: { ordinal: number; panel: { allow: number; answers: { model: string; outcome: string }[] } }[] };
    // The rate-limited proposal is the 1-of-3 split's agent asking again in the same hour (the next wake).
    const oneOfThree = split.rows.find((r) => r.panel.allow === 1)!;
    expect(j.rows[0]!.ordinal).toBe(oneOfThree.ordinal + 1);
    expect(oneOfThree.panel.answers.map((a) => `${a.model} ${a.outcome}`)).toEqual(['tally-local-rules-v1 ALLOW', 'tally-local-sceptic-v1 judge_denied', 'tally-local-cautious-v1 judge_denied']);
  });

  it('the bundle verifies pinned to its root and replays with every ruling re-derived (no divergence); a bad --ruling is a usage error', () => {
    const root = /^  receipt root +([0-9a-f]{64})$/m.exec(demo.stdout)![1]!;
    const v = tally(['verify', bundle, '--root', root]);
    expect(v.code, v.stderr).toBe(0);
    const r = tally(['replay', bundle, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, receiptRoot: root, ruler: 'referee', externalFacts: [] });
    expect(tally(['replay', bundle]).stdout).toMatch(/^replayed: \d+ entries, 49 turns; all \d+ rulings re-derived$/m);
    const bad = tally(['inspect', bundle, '--ruling', 'judge_timeout']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^tally inspect: --ruling must be /);
  });
});
