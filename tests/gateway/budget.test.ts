/**
 * Budgets on tool calls (docs/PROTOCOL.md §18.3 step 8), through the gateway
 * and a real upstream that counts what reached it: the sum of an argument
 * over the day's admitted calls never passes the mandate's budget, a refused
 * call spends nothing and never reaches the upstream, and replay re-derives
 * every ruling. A property (fast-check, seed printed) drives random amounts
 * against an independent running total.
 */
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { parseToolPolicy, ToolPolicyProblem } from '../../src/referee/tools.js';
import { COUNTING, mandateSpec, startDay, toolRulings, verifyAndReplay, type Day } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-gw-budget-'));
const days: Day[] = [];
afterAll(async () => {
  for (const d of days) await d.upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('tool budgets', () => {
  it('refuses the call that would overspend, sends only admitted ones, and replays', async () => {
    const seed = Number(process.env['FC_SEED'] ?? Date.now() % 2 ** 31);
    console.log(`budget property seed ${seed} (FC_SEED=${seed} to repeat)`);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 8 }), async (amounts) => {
        const count = join(dir, `count-${++run}`);
        const d = await startDay(COUNTING, mandateSpec({ allow: { add: { args: { a: { type: 'integer' }, b: { type: 'integer' } }, budget: { a: '12' } } } }), { env: { ...process.env, COUNT_FILE: count } });
        days.push(d);
        let spent = 0;
        const expected: (true | string)[] = [];
        for (const a of amounts) {
          const r = JSON.stringify(await d.call('add', { a, b: 1 }));
          if (spent + a <= 12) {
            spent += a;
            expected.push(true);
            expect(r).toContain(`"${a + 1}"`);
          } else {
            expected.push('tool_budget_exceeded');
            expect(r).toMatch(/tool_budget_exceeded.*at most 12/);
          }
        }
        await d.gateway.finish('agent-disconnected');
        await d.upstream.close();
        const reached = existsSync(count) ? readFileSync(count, 'utf8').trim().split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { args: { a: number } }).args.a) : [];
        expect(reached).toEqual(amounts.filter((_, i) => expected[i] === true));
        expect(reached.reduce((x, y) => x + y, 0)).toBeLessThanOrEqual(12);
        const rulings = (await toolRulings(d.store, d.gateway.sessionId)).slice(0, -1).map((t) => (t.ruling?.['admitted'] === true ? true : t.ruling?.['code']));
        expect(rulings).toEqual(expected);
        const { verified, replayed } = await verifyAndReplay(d.store, d.gateway.sessionId);
        expect(verified.ok && replayed.ok).toBe(true);
      }),
      { seed, numRuns: 6 },
    );
  }, 120_000);

  it('a budget must name a figure argument and be a positive canonical decimal', () => {
    const bad = (rule: unknown) => () => parseToolPolicy({ allow: { pay: rule } });
    expect(bad({ budget: { amount: '5' } })).toThrow(ToolPolicyProblem);
    expect(bad({ args: { amount: { type: 'string' } }, budget: { amount: '5' } })).toThrow(/integer" or "decimal/);
    for (const cap of ['0', '-1', '1.50', 5, '']) expect(bad({ args: { amount: { type: 'decimal' } }, budget: { amount: cap } })).toThrow(/greater than 0/);
    expect(parseToolPolicy({ allow: { pay: { args: { amount: { type: 'decimal' } }, budget: { amount: '2.5' } } } }).allow.get('pay')?.budget).toEqual({ amount: '2.5' });
  });
});
