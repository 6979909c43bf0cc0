/**
 * The referee rules before anything goes upstream: a signed mandate's tools
 * section (allowed tools, server, argument rules, rates) against a counting
 * upstream written with the SDK, which logs every call it receives — so
 * "refused never reaches upstream" is counted where it would happen. Also
 * idempotency (same id + bytes answered from the record; same id, other
 * bytes refused) and a fast-check property: every call is exactly one turn,
 * in order, and the upstream saw exactly the admitted ones.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createRefereeRuler } from '../../src/referee/ruler.js';
import { Engine } from '../../src/session/index.js';
import { MemoryStore } from '../../src/store/memory.js';
import { COUNTING, mandateSpec, startDay, toolRulings, verifyAndReplay } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-gw-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function counting() {
  const file = join(dir, `count-${++n}.jsonl`);
  writeFileSync(file, '');
  const seen = () => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { name: string; args: Record<string, unknown> });
  return { env: { ...process.env, COUNT_FILE: file }, seen };
}

const TOOLS = {
  allow: {
    add: { server: 'counting', args: { a: { type: 'integer', minimum: 0, maximum: 100 }, b: { type: 'integer' } }, required: ['a', 'b'], additional: false },
    note: { args: { text: { type: 'string', enum: ['buy', 'sell'] } }, rate: { max: 2, window_ms: 3_600_000 } },
  },
};

const code = (r: Record<string, unknown>) => ((r['result'] as { _meta?: Record<string, { code?: string }> })._meta?.['dev.tally/ruling']?.code);

describe('the referee gates tool calls', () => {
  it('admits what the mandate allows, refuses the rest, and nothing refused reaches the upstream', async () => {
    const c = counting();
    const d = await startDay(COUNTING, mandateSpec(TOOLS), { env: c.env });
    try {
      const ok = await d.call('add', { a: 2, b: 3 });
      expect(ok['result']).toEqual({ content: [{ type: 'text', text: '5' }] });
      expect(code(await d.call('add', { a: 101, b: 3 }))).toBe('tool_argument_refused');
      expect(code(await d.call('add', { a: 1 }))).toBe('tool_argument_refused');
      expect(code(await d.call('add', { a: 1, b: 1, c: 1 }))).toBe('tool_argument_refused');
      expect(code(await d.call('add', { a: '1', b: 1 }))).toBe('tool_argument_refused');
      expect(code(await d.call('note', { text: 'hold' }))).toBe('tool_argument_refused');
      expect((await d.call('note', { text: 'buy' }))['result']).toEqual({ content: [{ type: 'text', text: 'noted 3' }] });
      expect((await d.call('note', { text: 'sell' }))['result']).toEqual({ content: [{ type: 'text', text: 'noted 4' }] });
      expect(code(await d.call('note', { text: 'buy' }))).toBe('tool_rate_limited');
      expect(code(await d.call('missing'))).toBe('tool_not_offered');
      const refused = await d.call('add', { a: 2.5, b: 1 });
      expect(code(refused)).toBe('tool_call_not_canonical');
      expect((refused['result'] as { content: { text: string }[] }).content[0]!.text).toMatch(/decimal strings/);
      await d.gateway.finish('agent-disconnected');
      expect(c.seen()).toEqual([
        { name: 'add', args: { a: 2, b: 3 } },
        { name: 'note', args: { text: 'buy' } },
        { name: 'note', args: { text: 'sell' } },
      ]);
      const { verified, replayed } = await verifyAndReplay(d.store, d.gateway.sessionId);
      expect(verified.ok).toBe(true);
      expect(replayed).toMatchObject({ ok: true, rulings: 11 });
    } finally {
      await d.upstream.close();
    }
  }, 30_000);

  it('a tool allowed only on another server, and a tool the mandate does not list, refuse', async () => {
    const c = counting();
    const d = await startDay(COUNTING, mandateSpec({ allow: { add: { server: 'elsewhere' } } }), { env: c.env });
    try {
      expect(code(await d.call('add', { a: 1, b: 1 }))).toBe('server_not_allowed');
      expect(code(await d.call('note', { text: 'x' }))).toBe('tool_not_allowed');
    } finally {
      await d.upstream.close();
    }
    expect(c.seen()).toEqual([]);
  }, 30_000);

  it('unknown mandate keys fail closed: the day does not open', async () => {
    const store = new MemoryStore();
    const engine = new Engine({ store, ruler: createRefereeRuler({ store }) });
    for (const tools of [{ allow: {}, budget: 1 }, { allow: { add: { args: { a: { type: 'integer', pattern: 'x' } } } } }, { allow: { add: { limit: 1 } } }]) {
      const r = await engine.open(mandateSpec(tools));
      expect(r.ok, JSON.stringify(tools)).toBe(false);
      if (!r.ok) expect(r.message).toMatch(/unknown member/);
    }
    const r = await engine.open({ name: 'x', mcp: { upstream: 'a', port: 1 } });
    expect(r.ok).toBe(false);
  });

  it('a retry (same id, same bytes) is answered from the record; same id, other bytes is refused', async () => {
    const c = counting();
    const d = await startDay(COUNTING, undefined, { env: c.env });
    try {
      const first = await d.call('add', { a: 1, b: 2 }, 'req-1');
      const again = await d.call('add', { a: 1, b: 2 }, 'req-1');
      expect(again).toEqual(first);
      expect(code(await d.call('add', { a: 5, b: 5 }, 'req-1'))).toBe('tool_call_id_conflict');
      await d.gateway.finish('agent-disconnected');
      expect(c.seen()).toHaveLength(1);
      expect(d.gateway.counts).toEqual({ turns: 2, upstreamCalls: 1, retries: 1 });
      const { replayed } = await verifyAndReplay(d.store, d.gateway.sessionId);
      expect(replayed.ok).toBe(true);
    } finally {
      await d.upstream.close();
    }
  }, 30_000);
});

describe('property: every call is one turn, in order; the upstream saw exactly the admitted ones', () => {
  const call = fc.oneof(
    fc.record({ name: fc.constant('add'), args: fc.record({ a: fc.integer({ min: -5, max: 120 }), b: fc.integer({ min: -3, max: 3 }) }) }),
    fc.record({ name: fc.constant('note'), args: fc.record({ text: fc.constantFrom('buy', 'sell', 'hold') }) }),
    fc.record({ name: fc.constantFrom('missing', 'add'), args: fc.constant({}) }),
  );
  it('holds', async () => {
    const seed = Number(process.env['FC_SEED'] ?? Date.now() % 2 ** 31);
    console.log(`fast-check seed ${seed}`);
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 12 }), async (calls) => {
        const c = counting();
        const d = await startDay(COUNTING, mandateSpec(TOOLS), { env: c.env });
        try {
          const ids: number[] = [];
          for (const x of calls) {
            const id = d.next();
            ids.push(id);
            await d.call(x.name, x.args, id);
          }
          await d.gateway.finish('agent-disconnected');
          const turns = await toolRulings(d.store, d.gateway.sessionId);
          expect(turns).toHaveLength(calls.length + 1);
          const parsed = turns.slice(0, -1).map((t) => JSON.parse(t.bytes) as { id: number; params: { name: string; arguments: unknown } });
          expect(parsed.map((p) => [p.id, p.params.name, p.params.arguments])).toEqual(calls.map((x, i) => [ids[i], x.name, x.args]));
          const admitted = turns.slice(0, -1).flatMap((t, i) => (t.ruling?.['admitted'] === true ? [{ name: calls[i]!.name, args: calls[i]!.args }] : []));
          expect(c.seen()).toEqual(admitted);
          const { replayed } = await verifyAndReplay(d.store, d.gateway.sessionId);
          expect(replayed).toMatchObject({ ok: true, rulings: calls.length });
        } finally {
          await d.upstream.close();
        }
      }),
      { seed, numRuns: 12 },
    );
  }, 120_000);
});

describe('replay re-derives every ruling', () => {
  it('an engine that admitted what the mandate refuses is caught by replay (ruling-diverged)', async () => {
    const { Gateway, ChildChannel, Upstream } = await import('../../src/gateway/index.js');
    const { replayInMemory } = await import('../../src/receipt/replay/replay.js');
    const { replayRuler } = await import('../../src/referee/replay-ruler.js');
    const { bundleOf } = await import('./helpers.js');
    const c = counting();
    const store = new MemoryStore();
    const honest = createRefereeRuler({ store });
    // The mutation: a ruler that checks the spec like the referee but admits every call.
    const lax = { checkSpec: (spec: Parameters<NonNullable<typeof honest.checkSpec>>[0]) => honest.checkSpec?.(spec), rule: () => ({ ruling: { tool: { stage: 'tool', admitted: true, name: 'add' } }, nonces: [] }) };
    const engine = new Engine({ store, ruler: lax });
    const upstream = new Upstream(new ChildChannel(COUNTING[0]!, COUNTING.slice(1), 262_144, c.env), 262_144);
    const g = new Gateway({ engine, upstream, spec: mandateSpec(TOOLS), timeoutMs: 10_000 });
    try {
      await g.start();
      await g.handle({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 1 } } });
      await g.handle({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 500, b: 1 } } });
      await g.finish('agent-disconnected');
    } finally {
      await upstream.close();
    }
    expect(c.seen()).toHaveLength(2); // the lax engine let the over-cap call through
    const r = await replayInMemory(await bundleOf(store, g.sessionId), { ruler: replayRuler('auto', true).ruler });
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r)).toMatch(/ruling-diverged/);
    expect(JSON.stringify(r)).toMatch(/tool_argument_refused/);
  }, 30_000);
});
