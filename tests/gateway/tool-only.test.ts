/**
 * A tool-only mandate (docs/PROTOCOL.md §18.7): `tools` and none of the
 * trading members, signed by its principal (both schemes). It opens a
 * gateway day with no `agents` or `intent` section and rules tool calls as
 * any mandate does; replay re-derives the rulings. A trading member in it, or
 * a spec that is not a gateway day, is refused at open; a trading mandate's
 * problems are worded as before.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { parseMandate } from '../../src/referee/mandate.js';
import { createRefereeRuler } from '../../src/referee/ruler.js';
import { signMandateWithKey } from '../../src/referee/index.js';
import { Engine } from '../../src/session/index.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { CanonicalObject, SessionSpec } from '../../src/protocol/index.js';
import { KEY_PRINCIPAL, mandate, principal, unsignedSpec } from '../referee/fixtures.js';
import { COUNTING, startDay, toolRulings, verifyAndReplay, type Day } from './helpers.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'tally-tool-only-'));
const days: Day[] = [];
afterAll(async () => {
  for (const d of days) await d.upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function toolOnly(over: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Date.now();
  return { version: 2, instance: 'tools-only/1', principal: principal.address, starts_at: now - 60_000, expires_at: now + 3_600_000, tools: { allow: { add: { args: { a: { type: 'integer', maximum: 10 } } } } }, ...over };
}
const spec = (m: Record<string, unknown>, extra: Record<string, unknown> = { mcp: { run: `${process.pid}-${++n}` } }): SessionSpec => ({ name: `tool-only-${n}`, mandate: m as CanonicalObject, ...extra }) as SessionSpec;

async function openWith(s: SessionSpec) {
  const store = new MemoryStore();
  const engine = new Engine({ store, ruler: createRefereeRuler({ store }) });
  return engine.open(s);
}

describe('a tool-only mandate', () => {
  for (const scheme of ['eip712', 'eip191'] as const) {
    it(`signed (${scheme}), with no agents or intent section, rules a gateway day; replay re-derives it`, async () => {
      const signed = signMandateWithKey(spec(toolOnly()), KEY_PRINCIPAL, scheme);
      expect(parseMandate(signed)).toMatchObject({ ok: true, mandate: { toolOnly: true, actions: [] } });
      const count = join(dir, `count-${scheme}`);
      const d = await startDay(COUNTING, signed, { env: { ...process.env, COUNT_FILE: count } });
      days.push(d);
      expect(JSON.stringify(await d.call('add', { a: 2, b: 3 }))).toContain('"5"');
      expect(JSON.stringify(await d.call('add', { a: 11, b: 3 }))).toContain('tool_argument_refused');
      expect(JSON.stringify(await d.call('note', { text: 'x' }))).toContain('tool_not_allowed');
      await d.gateway.finish('agent-disconnected');
      expect(readFileSync(count, 'utf8').trim().split('\n')).toHaveLength(1);
      const r = (await toolRulings(d.store, d.gateway.sessionId)).map((t) => t.ruling?.['code'] ?? t.ruling?.['admitted']);
      expect(r).toEqual([true, 'tool_argument_refused', 'tool_not_allowed', undefined]);
      const { verified, replayed } = await verifyAndReplay(d.store, d.gateway.sessionId);
      expect(verified.ok && replayed.ok, JSON.stringify(replayed)).toBe(true);
    }, 30_000);
  }

  it('refuses any trading member, naming each, and a spec that is not a gateway day', async () => {
    const bad = signMandateWithKey(spec(toolOnly({ caps: { size: '1', leverage: '1', slippage: '0' }, tx_cap: 3 })), KEY_PRINCIPAL);
    const r = parseMandate(bad);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.code).toBe('mandate_invalid');
      expect(r.problems).toEqual(expect.arrayContaining([expect.stringMatching(/spec\.mandate\.caps governs intents/), expect.stringMatching(/spec\.mandate\.tx_cap governs intents/)]));
    }
    const opened = await openWith(bad);
    expect(opened.ok).toBe(false);
    const noGateway = signMandateWithKey(spec(toolOnly(), {}), KEY_PRINCIPAL);
    const r2 = parseMandate(noGateway);
    expect(r2).toMatchObject({ ok: false, code: 'mandate_invalid' });
    expect(!r2.ok && r2.problem).toMatch(/gateway day only/);
    expect((await openWith(noGateway)).ok).toBe(false);
    // Unsigned, it is refused as every mandate is.
    expect(parseMandate(spec(toolOnly()))).toMatchObject({ ok: false, code: 'mandate_unsigned' });
  });

  it('a trading mandate keeps its own problems (tools do not make a missing caps optional when actions are given)', () => {
    const m = mandate({ caps: undefined, tools: { allow: { add: {} } } });
    const r = parseMandate(unsignedSpec('trading', m));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toMatch(/spec\.mandate\.caps/);
    const plain = parseMandate(unsignedSpec('trading', mandate({ caps: undefined })));
    expect(!plain.ok && plain.problem).toBe(!r.ok && r.problem);
  });
});
