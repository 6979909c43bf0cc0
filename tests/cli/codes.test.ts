import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTENT_RULING_CATALOGUE } from '../../src/intent/index.js';
import { REFEREE_RULING_CATALOGUE } from '../../src/referee/index.js';
import { TOOL_CODE_CATALOGUE } from '../../src/referee/tool-codes.js';
import { CHAIN_ERROR_CODES, FAILURE_CLASSES, SESSION_DIAGNOSTICS } from '../../src/protocol/index.js';
import { tally } from './helpers.js';

describe('tally codes and --help (from outside)', () => {
  it('--json lists every intent and referee ruling with stage, when and fix, every diagnostic and stand-down class', () => {
    const r = tally(['codes', '--json']);
    expect(r.code).toBe(0);
    const c = JSON.parse(r.stdout) as { rulings: { source: string; stage: string; code: string; when: string; fix: string }[]; diagnostics: { code: string; when: string; fix: string }[]; standDowns: { class: string }[] };
    expect(c.rulings.filter((x) => x.source === 'intent').map((x) => x.code)).toEqual(INTENT_RULING_CATALOGUE.map((x) => x.code));
    expect(c.rulings.filter((x) => x.source === 'referee').map((x) => x.code)).toEqual(REFEREE_RULING_CATALOGUE.map((x) => x.code));
    expect(c.rulings.filter((x) => x.source === 'gateway').map((x) => x.code)).toEqual(TOOL_CODE_CATALOGUE.map((x) => x.code));
    for (const x of c.rulings) for (const k of ['stage', 'when', 'fix'] as const) expect(x[k].length, `${x.code}.${k}`).toBeGreaterThan(10 * Number(k !== 'stage'));
    expect(c.diagnostics.map((d) => d.code)).toEqual([...SESSION_DIAGNOSTICS]);
    for (const d of c.diagnostics) expect(d.when.length + d.fix.length).toBeGreaterThan(40);
    expect(c.standDowns.map((s) => s.class)).toEqual([...FAILURE_CLASSES]);
  });

  it('prints the catalogue as a table', () => {
    const r = tally(['codes']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^intent +schema +invalid_schema +/m);
    expect(r.stdout).toMatch(/^referee +verdict +judge_denied +/m);
    expect(r.stdout).toMatch(/^gateway +tool +tool_argument_refused +/m);
    expect(r.stdout).toMatch(/^ +turn-conflict +The slot is already filled/m);
    expect(r.stdout).toMatch(/^ +fix: /m);
    expect(tally(['codes', 'one', 'two']).code).toBe(2);
  });

  it('every command answers --help with its usage, and tally --help lists them all', () => {
    const top = tally(['--help']);
    expect(top.code).toBe(0);
    for (const name of ['demo', 'inspect', 'open', 'frame', 'turn', 'finalize', 'events', 'describe', 'codes']) {
      expect(top.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
      const h = tally([name, '-h']);
      expect(h.code, name).toBe(0);
      expect(h.stdout, name).toContain(`Usage: tally ${name}`);
      expect(h.stdout, name).toContain('Exit codes:');
    }
  });
});

/**
 * Every code the sources can emit has an entry in `tally codes`: the code
 * literals written in the emitting files (`code: '…'`, `fail('…'`, replay's
 * `kind: '…'`) are read from the source text, not from the catalogues, so a
 * new code added where it is emitted without an explanation fails here.
 */
describe('tally codes <code> and the completeness of the catalogue', () => {
  const root = resolve(import.meta.dirname, '../../src');
  const files = (dir: string): string[] => readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => join(root, dir, f));
  const literals = (paths: string[], re: RegExp): Set<string> => new Set(paths.flatMap((p) => [...readFileSync(p, 'utf8').matchAll(re)].map((m) => m[1]!)));
  // Not diagnostics of a day: the HTTP judge service's wire errors, zod's issue kind, a JSON value type tag.
  const notDayCodes = new Set(['custom', 'null']);
  const judgeWire = literals([join(root, 'referee/judge-service.ts')], /code: '([a-z_-]+)'/g);

  it('every ruling, open refusal, verification code and replay kind the sources emit is listed', () => {
    const listed = JSON.parse(tally(['codes', '--json']).stdout) as { rulings: { code: string }[]; open: { code: string }[]; verify: { code: string }[]; replay: { kind: string }[]; diagnostics: { code: string }[] };
    const known = new Set([...listed.rulings, ...listed.open, ...listed.verify, ...listed.diagnostics].map((r) => r.code));
    const emitted = literals([...files('intent'), ...files('referee').filter((f) => !f.endsWith('judge-service.ts'))], /code: '([a-z_-]+)'/g);
    for (const c of literals(['protocol/chain.ts', 'protocol/line.ts', 'protocol/stream.ts'].map((f) => join(root, f)), /(?:code: |fail\()'([a-z-]+)'/g)) emitted.add(c);
    const missing = [...emitted].filter((c) => !known.has(c) && !notDayCodes.has(c) && !judgeWire.has(c));
    expect(missing).toEqual([]);
    expect(emitted.size).toBeGreaterThan(50);
    const kinds = literals(files('receipt/replay'), /kind: '([a-z]+-diverged|rejected)'/g);
    expect(new Set(listed.replay.map((r) => r.kind))).toEqual(kinds);
    expect(listed.verify.map((v) => v.code)).toEqual([...CHAIN_ERROR_CODES]);
  });

  it('explains one code, in every family that uses the name', () => {
    const r = tally(['codes', 'quota_exhausted']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^quota_exhausted: a ruling recorded in the turn .*stage policy\n  when: /);
    expect(r.stdout).toContain(`fix: ${REFEREE_RULING_CATALOGUE.find((x) => x.code === 'quota_exhausted')!.fix.split(' ')[0]}`);
    const both = JSON.parse(tally(['codes', 'wrong-session', '--json']).stdout) as { ok: boolean; entries: { family: string }[] };
    expect(both.entries.map((e) => e.family)).toEqual(['diagnostic', 'verify']);
    expect(tally(['codes', 'broken-link']).stdout).toContain('bundle verification failure');
    expect(tally(['codes', 'mandate_unsigned']).stdout).toContain('refusal to open the spec');
  });

  it('an unknown code is a usage error naming the nearest one', () => {
    const r = tally(['codes', 'quota_exausted']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("did you mean 'quota_exhausted'?");
    expect(JSON.parse(tally(['codes', 'nope-nope-nope', '--json']).stdout)).toMatchObject({ ok: false, exit: 2 });
  });
});
