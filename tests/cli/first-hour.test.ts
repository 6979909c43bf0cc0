/**
 * The remaining rough edges of a user's first hour (issue #28), from outside:
 * re-running a sealed spec says so at open; every mandate problem is reported
 * in one run; inspect --agent with an unknown agent names the agents the day
 * knows; a spec that is not JSON exits 1, as an invalid bundle does.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDemo } from '../../src/demo/run.js';
import { mandate, unsignedSpec } from '../referee/fixtures.js';
import { tally } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-first-hour-'));
const golden = resolve(import.meta.dirname, '../golden/transcript.jsonl');

describe('a sealed spec run again', () => {
  it('open says the session exists and is sealed, and to put a date or run id in the spec', () => {
    const env = { TALLY_DB: join(dir, 'sealed.db') };
    const spec = join(dir, 'spec.json');
    writeFileSync(spec, JSON.stringify({ name: 'desk-day' }));
    const first = tally(['open', '--spec', spec], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/\(created\)/);
    const sid = /^session ([0-9a-f]{64})/.exec(first.stdout)![1]!;
    expect(tally(['open', '--spec', spec], { cwd: dir, env }).stdout).toMatch(/\(already open\)\nnext: tally frame/);
    expect(tally(['finalize', '--session', sid], { cwd: dir, env }).code).toBe(0);
    const again = tally(['open', '--spec', spec], { cwd: dir, env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`session ${sid} (exists and is sealed)`);
    expect(again.stdout).toContain("this spec's session exists and is sealed: put a date or run id in the spec");
    expect(again.stdout).not.toContain('already open');
    expect(JSON.parse(tally(['open', '--spec', spec, '--json'], { cwd: dir, env }).stdout)).toMatchObject({ ok: true, created: false, sealed: true, sessionId: sid });
  });
});

describe('mandate problems, all at once', () => {
  it('open names every problem of the mandate in one refusal', () => {
    const spec = join(dir, 'bad-mandate.json');
    const m = mandate({ principal: '0x1234', caps: { size: '0', leverage: '10', slippage: '2' }, tx_cap: 0, bogus: 1 });
    writeFileSync(spec, JSON.stringify(unsignedSpec('bad-mandate', m)));
    const r = tally(['open', '--spec', spec, '--db', join(dir, 'm.db')]);
    expect(r.code).toBe(1);
    for (const p of ['spec.mandate: unknown member "bogus"', 'spec.mandate.principal must be', 'spec.mandate.caps.size must be greater than 0', 'spec.mandate.caps.slippage must be a fraction', 'spec.mandate.tx_cap must be an integer']) expect(r.stderr).toContain(p);
    expect(r.stderr).toContain('5 problems in spec.mandate: spec.mandate: unknown member "bogus"');
  });

  it('a missing member is named once, not again as malformed', () => {
    const spec = join(dir, 'missing-member.json');
    writeFileSync(spec, JSON.stringify(unsignedSpec('missing', mandate({ executor: undefined, tx_cap: 'x' }))));
    const r = tally(['open', '--spec', spec, '--db', join(dir, 'm.db')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('2 problems in spec.mandate: spec.mandate.executor is required; spec.mandate.tx_cap must be an integer');
    expect(r.stderr).not.toContain('executor must be');
  });
});

describe('inspect --agent with an agent the day does not know', () => {
  it('names the agents it does know (and the nearest one)', async () => {
    const bundle = (await runDemo({ seed: 3, wakes: 6, out: join(dir, 'demo'), db: 'memory:' })).files.bundle;
    const agents = (JSON.parse(tally(['inspect', bundle, '--json']).stdout) as { agents: string[] }).agents;
    expect(agents).toEqual(['alpha', 'beta']);
    const r = tally(['inspect', bundle, '--agent', 'nobody']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("tally inspect: this day knows no agent 'nobody'; its agents: alpha, beta\n");
    expect(tally(['inspect', bundle, '--agent', 'alpah']).stderr).toContain("(did you mean 'alpha'?)");
    expect(tally(['inspect', bundle, '--agent', 'alpha']).stderr).toBe('');
  });
});

describe('input that is not valid exits 1, whatever it is', () => {
  it('a spec file that is not JSON and a bundle that is not valid share exit 1', () => {
    const notJson = join(dir, 'spec.txt');
    writeFileSync(notJson, 'name: desk\n');
    const spec = tally(['open', '--spec', notJson, '--db', join(dir, 'x.db')]);
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, readFileSync(golden, 'utf8').replace('"ordinal":1,', '"ordinal":1 ,'));
    const bundle = tally(['verify', bad]);
    expect(bundle.code).toBe(1);
    expect(spec.code).toBe(bundle.code);
    expect(spec.stderr).toContain('is not valid JSON');
    expect(JSON.parse(tally(['open', '--spec', notJson, '--db', join(dir, 'x.db'), '--json']).stdout)).toMatchObject({ ok: false, code: 'TALLY_CLI_INVALID_JSON', exit: 1 });
  });
});
