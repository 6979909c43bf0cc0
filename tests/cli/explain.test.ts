/**
 * Human output explains instead of dumping (issue #28): inspect --wide shows
 * reasons whole; verify-proof sums up the ruling in one line; a turn ruled by
 * several checks prints one overall outcome; verify on a signed note or a
 * tlog-proof says what the file is and how to use it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tally } from './helpers.js';

const dir = join(mkdtempSync(join(tmpdir(), 'tally-explain-')), 'demo');

beforeAll(() => {
  const r = tally(['demo', '--out', dir, '--wakes', '48', '--json']);
  expect(r.code, r.stderr).toBe(0);
});

describe('explained output', () => {
  it('inspect cuts long reasons to fit; --wide shows them whole', () => {
    const cut = tally(['inspect', join(dir, 'bundle.jsonl')]).stdout.split('\n');
    const wide = tally(['inspect', join(dir, 'bundle.jsonl'), '--wide']).stdout.split('\n');
    expect(wide).toHaveLength(cut.length);
    const i = cut.findIndex((l) => /^turn .*REJECTED .*…$/.test(l));
    expect(i, 'a rejected turn with a reason cut short').toBeGreaterThan(0);
    expect(wide[i]!.length).toBeGreaterThan(cut[i]!.length);
    expect(wide[i]!.startsWith(cut[i]!.slice(0, -1))).toBe(true);
    expect(wide.filter((l) => l.startsWith('turn ') && l.endsWith('…'))).toEqual([]);
  });

  it('verify-proof sums the ruling up in one short line', () => {
    const r = tally(['verify-proof', join(dir, 'proof.tlog-proof'), '--vkey', join(dir, 'engine.vkey')]);
    expect(r.code, r.stderr).toBe(0);
    const ruling = r.stdout.split('\n').find((l) => l.startsWith('ruling '))!;
    expect(ruling).toMatch(/^ruling {7}\S.*: (ADMITTED|REJECTED \S+ \(\w+\)).* \(the whole ruling: --json\)$/);
    expect(ruling.length).toBeLessThan(300);
    expect(ruling).not.toContain('{');
    const json = JSON.parse(tally(['verify-proof', join(dir, 'proof.tlog-proof'), '--vkey', join(dir, 'engine.vkey'), '--json']).stdout) as { entry: { ruling: unknown } };
    expect(JSON.stringify(json.entry.ruling).length).toBeGreaterThan(ruling.length);
  });

  it('a turn ruled by several checks prints one overall outcome line', async () => {
    const { turnLines } = (await import(resolve(import.meta.dirname, '../../dist/cli/commands/turn.js'))) as typeof import('../../src/cli/commands/turn.js');
    const base = { ok: true, ordinal: 3, index: 8, entryHash: 'ab'.repeat(32), duplicate: false } as const;
    const denied = turnLines({ ...base, ruling: { intent: { admitted: true, action: 'open', agent_id: 'alpha' }, policy: { admitted: true }, verdict: { admitted: false, code: 'judge_denied', stage: 'verdict', message: 'no' } } } as never);
    expect(denied[2]).toBe('outcome     REJECTED by verdict: judge_denied');
    const allowed = turnLines({ ...base, ruling: { intent: { admitted: true }, policy: { admitted: true }, verdict: { admitted: true } } } as never);
    expect(allowed[2]).toBe('outcome     ADMITTED (intent, policy, verdict all admitted)');
    expect(turnLines({ ...base, ruling: { intent: { admitted: true } } } as never).some((l) => l.startsWith('outcome'))).toBe(false);
  });

  it('verify on a signed note or a tlog-proof says what the file is', () => {
    const note = tally(['verify', join(dir, 'receipt.note')]);
    expect(note.code).toBe(1);
    expect(note.stderr).toContain('this is a signed note (a checkpoint), not a bundle: use it as --checkpoint');
    const proof = tally(['verify', join(dir, 'proof.tlog-proof')]);
    expect(proof.stderr).toContain('this is a single-turn receipt (a tlog-proof), not a bundle: tally verify-proof');
    expect(tally(['verify', join(dir, 'summary.json')]).stderr).not.toContain('this is a');
  });
});
