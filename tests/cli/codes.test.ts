import { describe, expect, it } from 'vitest';
import { INTENT_RULING_CATALOGUE } from '../../src/intent/index.js';
import { REFEREE_RULING_CATALOGUE } from '../../src/referee/index.js';
import { TOOL_CODE_CATALOGUE } from '../../src/referee/tool-codes.js';
import { FAILURE_CLASSES, SESSION_DIAGNOSTICS } from '../../src/protocol/index.js';
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
    expect(tally(['codes', 'extra']).code).toBe(2);
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
