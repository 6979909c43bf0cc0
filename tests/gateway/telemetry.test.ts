/**
 * OpenTelemetry GenAI conventions on the gateway: each recorded tool call is
 * an `execute_tool <tool>` span (a real SDK, in-memory exporter) with
 * gen_ai.operation.name, gen_ai.tool.name (only a tool the upstream offered),
 * gen_ai.tool.call.id, gen_ai.conversation.id = the session id, the referee's
 * decision as gen_ai.guardrail.result with tally.ruling.code, and the engine's
 * turn and frame spans as its children. Arguments, results and names the
 * agent made up never appear in a span.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { installSdk } from '../telemetry/helpers.js';
import { COUNTING, mandateSpec, startDay } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-gw-otel-'));
const sdk = installSdk();
afterAll(async () => {
  await sdk.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

describe('execute_tool spans', () => {
  it('carry the GenAI attributes and the guardrail decision, and nothing the agent wrote', async () => {
    const file = join(dir, 'count.jsonl');
    writeFileSync(file, '');
    const SECRET = 'SECRET-arg-7f3a';
    const d = await startDay(COUNTING, mandateSpec({ allow: { note: { args: { text: { type: 'string', max_length: 40 } } } } }), { env: { ...process.env, COUNT_FILE: file } });
    try {
      await d.call('note', { text: SECRET }, 7);
      await d.call('add', { a: 1, b: 2 }, 8);
      await d.call(`tly_${SECRET}`, {}, 9);
      await d.gateway.finish('agent-disconnected');
    } finally {
      await d.upstream.close();
    }
    const spans = sdk.spans();
    const tools = spans.filter((s) => s.name.startsWith('execute_tool'));
    expect(tools.map((s) => s.name)).toEqual(['execute_tool note', 'execute_tool add', 'execute_tool']);
    expect(tools.map((s) => s.attributes)).toEqual([
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'note', 'gen_ai.tool.call.id': 7, 'gen_ai.conversation.id': d.gateway.sessionId, 'gen_ai.guardrail.result': 'admitted', 'tally.ruling.code': 'admitted', 'tally.tool.outcome': 'result' },
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'add', 'gen_ai.tool.call.id': 8, 'gen_ai.conversation.id': d.gateway.sessionId, 'gen_ai.guardrail.result': 'refused', 'tally.ruling.code': 'tool_not_allowed', 'tally.tool.outcome': 'refused' },
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.call.id': 9, 'gen_ai.conversation.id': d.gateway.sessionId, 'gen_ai.guardrail.result': 'refused', 'tally.ruling.code': 'tool_not_offered', 'tally.tool.outcome': 'refused' },
    ]);
    // The engine's verbs run inside the call's span.
    const first = tools[0]!.spanContext().spanId;
    const children = spans.filter((s) => s.parentSpanContext?.spanId === first).map((s) => s.name);
    expect(children).toEqual(expect.arrayContaining(['tally.turn', 'tally.frame']));
    const all = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events })));
    expect(all).not.toContain(SECRET);
  }, 30_000);
});
