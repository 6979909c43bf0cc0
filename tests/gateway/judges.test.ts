/**
 * Judges and group budgets on tool calls (docs/PROTOCOL.md §18.3 steps 8–9), through the gateway
 * and a real SDK upstream that logs every call that reached it: a judge's DENY refuses, a silent
 * judge fails closed (judge_unavailable), an ALLOW passes, and none of the refused calls reaches
 * the upstream; a group budget within a window counts a call whose outcome is UNKNOWN (fail
 * closed); every day verifies and replays, replay re-deriving each ruling from the recorded
 * verdicts without asking. A fast-check property (seed printed) drives calls of two tools, some
 * timing out, against an independent running total.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalJudge, type Judge } from '../../src/referee/index.js';
import { parseToolPolicy, ToolPolicyProblem } from '../../src/referee/tools.js';
import { COUNTING, frames, mandateSpec, startDay, toolRulings, verifyAndReplay, type Day } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-gw-judges-'));
const days: Day[] = [];
afterAll(async () => {
  for (const d of days) await d.upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

const KEY = `0x${'0b'.repeat(32)}` as const;
const SIGNER = privateKeyToAccount(KEY).address.toLowerCase();
const MODEL = 'tool-judge-1';
const RULES = ['Notes must not mention passwords.'];

/** The judge: DENY when the call's arguments mention "password", else ALLOW (signed with KEY through the local judge's path). */
const judge = (): Judge =>
  createLocalJudge({
    key: KEY,
    model: MODEL,
    script: (q) => {
      const deny = String(q.request.intent['arguments']).includes('password');
      return JSON.stringify({ reason: deny ? 'mentions a password' : 'fine', verdict: deny ? 'DENY' : 'ALLOW', action: q.request.action });
    },
  });
const silent = (): Judge => ({ model: MODEL, signer: SIGNER, ask: () => new Promise(() => undefined) });

let run = 0;
const countFile = () => join(dir, `count-${++run}`);
const reached = (file: string): { name: string; args: Record<string, unknown> }[] => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { name: string; args: Record<string, unknown> }) : []);
const judgedNote = { note: { args: { text: { type: 'string' } }, rules: RULES, judges: [SIGNER] }, add: { args: { a: { type: 'integer' }, b: { type: 'integer' } } } };

describe('judges on tool calls', () => {
  it('an ALLOW passes, a DENY refuses, and only the allowed call reaches the upstream; replay agrees', async () => {
    const count = countFile();
    const d = await startDay(COUNTING, mandateSpec({ allow: judgedNote }), { env: { ...process.env, COUNT_FILE: count }, judges: [judge()] });
    days.push(d);
    const ok = JSON.stringify(await d.call('note', { text: 'buy milk' }));
    expect(ok).toContain('noted 8');
    const no = await d.call('note', { text: 'the password is hunter2' });
    const result = no['result'] as { isError?: boolean; content: { text: string }[] };
    expect(result.isError).toBe(true);
    expect(result.content.map((c) => c.text).join(' ')).toMatch(/judge_denied/);
    // A tool without judges is not put to them.
    expect(JSON.stringify(await d.call('add', { a: 1, b: 2 }))).toContain('"3"');
    await d.gateway.finish('agent-disconnected');
    await d.upstream.close();
    expect(reached(count).map((c) => c.name + ':' + String(c.args['text'] ?? c.args['a']))).toEqual(['note:buy milk', 'add:1']);
    const rulings = (await toolRulings(d.store, d.gateway.sessionId)).slice(0, -1).map((t) => t.ruling);
    expect(rulings.map((r) => (r?.['admitted'] === true ? 'admitted' : r?.['code']))).toEqual(['admitted', 'judge_denied', 'admitted']);
    expect(rulings[0]?.['verdict']).toMatchObject({ source: 'judged', admitted: true, decision: 'ALLOW', model: MODEL, signer: SIGNER });
    expect(rulings[1]?.['verdict']).toMatchObject({ source: 'judged', admitted: false, code: 'judge_denied', decision: 'DENY' });
    expect(rulings[2]?.['verdict']).toBeUndefined();
    const { verified, replayed } = await verifyAndReplay(d.store, d.gateway.sessionId);
    expect(verified.ok).toBe(true);
    expect(replayed.ok).toBe(true);
  }, 60_000);

  it('a silent judge fails closed (judge_unavailable, timeout) and nothing goes upstream; without a judge client too', async () => {
    for (const judges of [[silent()], []]) {
      const count = countFile();
      const d = await startDay(COUNTING, mandateSpec({ allow: judgedNote }), { env: { ...process.env, COUNT_FILE: count }, judges, judgeTimeoutMs: 300 });
      days.push(d);
      const r = await d.call('note', { text: 'buy milk' });
      const result = r['result'] as { isError?: boolean; content: { text: string }[] };
      expect(result.isError).toBe(true);
      expect(result.content.map((c) => c.text).join(' ')).toMatch(/judge_unavailable/);
      await d.gateway.finish('agent-disconnected');
      await d.upstream.close();
      expect(reached(count)).toEqual([]);
      const [t] = await toolRulings(d.store, d.gateway.sessionId);
      expect(t?.ruling).toMatchObject({ admitted: false, code: 'judge_unavailable', verdict: { failure: judges.length === 0 ? 'no_judge' : 'timeout' } });
      const { verified, replayed } = await verifyAndReplay(d.store, d.gateway.sessionId);
      expect(verified.ok && replayed.ok).toBe(true);
    }
  }, 60_000);

  it('a tool rule names judges as a mandate does: rules with judges or a panel, strictly', () => {
    const bad = (rule: unknown) => () => parseToolPolicy({ allow: { note: rule } });
    expect(bad({ rules: RULES })).toThrow(ToolPolicyProblem);
    expect(bad({ judges: [SIGNER] })).toThrow(/needs .*rules/);
    expect(bad({ rules: RULES, judges: [SIGNER], panel: { judges: [{ signer: SIGNER, model: MODEL }], quorum: 1 } })).toThrow(/exclusive/);
    expect(bad({ rules: RULES, judges: ['0x12'] })).toThrow(ToolPolicyProblem);
    const j = parseToolPolicy({ allow: { note: { rules: RULES, judges: [SIGNER] } } }).allow.get('note')?.judging;
    expect(j).toMatchObject({ rules: RULES, judges: [SIGNER], judgeRequest: 'verdict-v2' });
    expect(parseToolPolicy({ allow: { note: {} } }).allow.get('note')?.judging).toBeUndefined();
  });
});

describe('group budgets on tool calls', () => {
  it('the admitted calls of a group never sum past its budget within the window, UNKNOWN outcomes counted', async () => {
    const seed = Number(process.env['FC_SEED'] ?? Date.now() % 2 ** 31);
    console.log(`group budget property seed ${seed} (FC_SEED=${seed} to repeat)`);
    const cap = 10;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ slow: fc.boolean(), a: fc.integer({ min: 0, max: 6 }) }), { minLength: 1, maxLength: 6 }), async (calls) => {
        const count = countFile();
        const tools = {
          allow: { add: { args: { a: { type: 'integer' }, b: { type: 'integer' } } }, slow: { args: { a: { type: 'integer' }, ms: { type: 'integer' } } } },
          budgets: [{ tools: ['add', 'slow'], arg: 'a', max: String(cap), window_ms: 3_600_000 }],
        };
        const d = await startDay(COUNTING, mandateSpec(tools), { env: { ...process.env, COUNT_FILE: count }, timeoutMs: 150 });
        days.push(d);
        let spent = 0;
        const expected: string[] = [];
        for (const c of calls) {
          const r = JSON.stringify(await (c.slow ? d.call('slow', { a: c.a, ms: 2_000 }) : d.call('add', { a: c.a, b: 1 })));
          if (spent + c.a <= cap) {
            spent += c.a; // an UNKNOWN outcome (the slow tool times out) counts: the upstream may have acted
            expected.push('admitted');
            if (!c.slow) expect(r).toContain(`"${c.a + 1}"`);
          } else {
            expected.push('tool_budget_exceeded');
            expect(r).toMatch(new RegExp(`tool_budget_exceeded.*at most ${cap} per 3600000 ms`));
          }
        }
        await d.gateway.finish('agent-disconnected');
        await d.upstream.close();
        const got = reached(count).map((x) => x.args['a'] as number);
        expect(got).toEqual(calls.filter((_, i) => expected[i] === 'admitted').map((c) => c.a));
        expect(got.reduce((x, y) => x + y, 0)).toBeLessThanOrEqual(cap);
        const rulings = (await toolRulings(d.store, d.gateway.sessionId)).slice(0, -1).map((t) => (t.ruling?.['admitted'] === true ? 'admitted' : String(t.ruling?.['code'])));
        expect(rulings).toEqual(expected);
        // Every admitted slow call timed out: its outcome is UNKNOWN, and it was counted above.
        const outcomes = (await frames(d.store, d.gateway.sessionId)).filter((x) => x['kind'] === 'tool-result').map((x) => x['outcome']);
        expect(outcomes).toEqual(calls.map((c, i) => (expected[i] !== 'admitted' ? 'refused' : c.slow ? 'unknown' : 'result')));
        const { verified, replayed } = await verifyAndReplay(d.store, d.gateway.sessionId);
        expect(verified.ok && replayed.ok).toBe(true);
      }),
      { seed, numRuns: 5 },
    );
  }, 180_000);

  it('a group budget names allowed tools whose argument is a figure, and a positive canonical decimal', () => {
    const allow = { pay: { args: { amount: { type: 'decimal' }, memo: { type: 'string' } } }, tip: { args: { amount: { type: 'integer' } } } };
    const bad = (b: unknown) => () => parseToolPolicy({ allow, budgets: [b] });
    expect(bad({ tools: ['nope'], arg: 'amount', max: '5' })).toThrow(/not in the allow list/);
    expect(bad({ tools: ['pay'], arg: 'memo', max: '5' })).toThrow(/integer" or "decimal/);
    for (const max of ['0', '1.50', 5]) expect(bad({ tools: ['pay'], arg: 'amount', max })).toThrow(/greater than 0/);
    expect(bad({ tools: ['pay'], arg: 'amount', max: '5', window_ms: 10 })).toThrow(/window_ms/);
    expect(bad({ tools: ['pay', 'pay'], arg: 'amount', max: '5' })).toThrow(/duplicate/);
    expect(bad({ tools: ['pay'], arg: 'amount', max: '5', per: 'day' })).toThrow(/unknown member/);
    expect(parseToolPolicy({ allow, budgets: [{ tools: ['pay', 'tip'], arg: 'amount', max: '2.5' }] }).budgets).toEqual([{ tools: ['pay', 'tip'], arg: 'amount', max: '2.5', windowMs: undefined }]);
  });
});
