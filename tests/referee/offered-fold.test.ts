/**
 * The gateway day's fold takes the entries the engine has just appended from its hand
 * (`TurnRuler.appended` → `ToolHistory.offer`) instead of reading them back: on random
 * gateway days it must equal the fold of the same day read from the store alone, and
 * the live ruler must indeed have stopped decoding the day (it reads one row a fold:
 * the check that its last entry is still in the store).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRefereeRuler } from '../../src/referee/ruler.js';
import { ToolHistory } from '../../src/referee/tool-ruler.js';
import { Engine } from '../../src/session/index.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { CanonicalObject } from '../../src/protocol/index.js';

const enc = new TextEncoder();
const TOOLS = ['echo', 'add', 'get-sum', 'missing'];

type Step =
  | { kind: 'call'; id: number | string; tool: string; args: Record<string, unknown>; canonical: boolean }
  | { kind: 'tools'; offered: string[] };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('call' as const), id: fc.oneof(fc.integer({ min: 0, max: 12 }), fc.constantFrom('a', 'b')), tool: fc.constantFrom(...TOOLS), args: fc.dictionary(fc.constantFrom('amount', 'message', 'n'), fc.oneof(fc.integer({ min: -5, max: 99 }), fc.constantFrom('1.5', '7', 'x'))), canonical: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('tools' as const), offered: fc.subarray(TOOLS.slice(0, 3)) }) },
);

function callBytes(s: Extract<Step, { kind: 'call' }>): Uint8Array {
  const params = { arguments: s.args, name: s.tool };
  // Sorted keys (canonical, given sorted args) or the same call with its keys out of order.
  const args = Object.fromEntries(Object.entries(s.args).sort(([a], [b]) => (a < b ? -1 : 1)));
  const text = s.canonical ? JSON.stringify({ id: s.id, jsonrpc: '2.0', method: 'tools/call', params: { ...params, arguments: args } }) : JSON.stringify({ method: 'tools/call', jsonrpc: '2.0', id: s.id, params });
  return enc.encode(text);
}

async function runDay(steps: Step[], compareEvery: number): Promise<{ liveRowsRead: number; folds: number }> {
  const store = new MemoryStore();
  let reading = false;
  let liveRowsRead = 0;
  let folds = 0;
  // The live ruler's store: counts the rows it reads while the engine rules.
  const counted = {
    readRange: async (id: string, from: number, to: number) => {
      const rows = await store.readRange(id, from, to);
      if (reading) liveRowsRead += rows.length;
      return rows;
    },
  };
  const ruler = createRefereeRuler({ store: counted });
  const ruled = { ...ruler, rule: async (ctx: Parameters<typeof ruler.rule>[0]) => { reading = folds++ > 0; try { return await ruler.rule(ctx); } finally { reading = false; } } };
  const engine = new Engine({ store, ruler: ruled });
  const opened = await engine.open({ name: 'offered-fold', mcp: { run: String(Math.random()) } });
  if (!opened.ok) throw new Error(opened.message);
  const sessionId = opened.sessionId;
  let time = 1_000;
  let f = await engine.frame({ sessionId, ordinal: -1, time, data: { kind: 'mcp-open', server: 'srv', tools: [{ name: 'echo' }, { name: 'add' }] } as CanonicalObject });
  if (!f.ok) throw new Error(f.message);
  let ordinal = -1;
  for (const [i, s] of steps.entries()) {
    time += i % 3;
    const bytes = s.kind === 'call' ? callBytes(s) : enc.encode(JSON.stringify({ id: `t${i}`, jsonrpc: '2.0', method: 'tools/call', params: { arguments: {}, name: 'echo' } }));
    const t = await engine.turn({ sessionId, ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes } });
    if (!t.ok) throw new Error(t.message);
    ordinal++;
    // A tool list re-read is recorded by the next result frame (as the gateway does).
    const data = { kind: 'tool-result', id: i, outcome: 'result', result: { content: [{ text: `r${i}`, type: 'text' }] }, ...(s.kind === 'tools' ? { tools: s.offered.map((name) => ({ name })) } : {}) } as CanonicalObject;
    f = await engine.frame({ sessionId, ordinal, time, data, parentHash: t.entryHash });
    if (!f.ok) throw new Error(f.message);
    if (i % compareEvery === 0 || i === steps.length - 1) {
      const size = (await store.loadHead(sessionId))!.size;
      const live = await ruler.tools.fold(sessionId, size);
      const fromStore = await new ToolHistory(store).fold(sessionId, size);
      expect(live).toEqual(fromStore);
      expect([...(live.servers?.keys() ?? [])]).toEqual([...(fromStore.servers?.keys() ?? [])]);
    }
  }
  return { liveRowsRead, folds };
}

describe('the fold of entries in hand', () => {
  it('equals the fold read back from the store on random gateway days (seed 0x0ff3d)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 7 }), async (steps, every) => {
        const r = await runDay(steps, every);
        // Every fold after the first read one row (its last entry, still in place), never the new entries.
        expect(r.liveRowsRead).toBeLessThanOrEqual(r.folds - 1);
      }),
      { seed: 0x0ff3d, numRuns: 60 },
    );
  });
});
