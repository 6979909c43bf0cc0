/**
 * rulings.json (PROTOCOL.md §9, §10, §14): one scenario per ruling code.
 * Four runners must agree with each expected result: the referee engine
 * driven live from the scenario's inputs (the judges answer exactly the
 * recorded answers), the same through the MCP session tools, the library
 * `replay`, and `tally replay --ruler referee` (spawned). A ruling code without a scenario fails the coverage test.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { INTENT_CODES } from '../../src/intent/index.js';
import { replay, type ReplayResult } from '../../src/receipt/index.js';
import { REFEREE_CODES, createRefereeEngine, createRefereeRuler, type Judge, type JudgeAnswer, type JudgeFailure } from '../../src/referee/index.js';
import type { CanonicalValue, SessionSpec } from '../../src/protocol/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { verifyBundle } from '../../src/codec/index.js';
import { createMcpServer, localBackend } from '../../src/server/mcp/index.js';
import { WireService } from '../../src/server/service.js';
import { cliBatch } from './cli.js';
import { loadVectors } from './corpus.js';

type Answer = { model: string; ok: true; response: string; signature: string } | { model: string; ok: false; failure: JudgeFailure; message: string };
interface Step {
  time: number;
  data?: CanonicalValue;
  authored?: string;
  standDown?: true;
  answers?: Answer[];
}
type ReplayExpect = { ok: true; turns: number; rulings: number } | { ok: false; stage: string; index: number; kind?: string; code?: string };
interface Scenario {
  name: string;
  code: string;
  spec: SessionSpec;
  openedWithout?: 'referee';
  live?: false;
  steps: Step[];
  lines: string[];
  expect: { index: number; at: string; stage: string; code: string; replay: ReplayExpect };
}
const cases = loadVectors<{ cases: Scenario[] }>('rulings.json').cases;
const enc = new TextEncoder();

/** Judges that give, per model, exactly the answers recorded for the current step. */
function recordedJudges(s: Scenario): { judge?: Judge; panel?: Judge[]; load(step: Step): void } {
  const queues = new Map<string, Answer[]>();
  const make = (model: string, signer?: string): Judge => ({
    model,
    ...(signer === undefined ? {} : { signer }),
    ask: async (): Promise<JudgeAnswer> => {
      const a = queues.get(model)?.shift();
      if (a === undefined) throw new Error(`${s.name}: judge ${model} asked without a recorded answer`);
      return a.ok ? { ok: true, response: Buffer.from(a.response, 'base64'), signature: a.signature } : { ok: false, failure: a.failure, message: a.message };
    },
  });
  const load = (step: Step) => {
    queues.clear();
    for (const a of step.answers ?? []) queues.set(a.model, [...(queues.get(a.model) ?? []), a]);
  };
  const panel = (s.spec['mandate'] as { panel?: { judges: { signer: string; model: string }[] } } | undefined)?.panel;
  if (panel) return { panel: panel.judges.map((j) => make(j.model, j.signer)), load };
  const model = s.steps.flatMap((st) => st.answers ?? [])[0]?.model;
  return { ...(model === undefined ? {} : { judge: make(model) }), load };
}

/** Drives the scenario's inputs through a fresh referee engine; returns the transcript it writes. */
async function live(s: Scenario): Promise<string[]> {
  const store = new MemoryStore();
  const judges = recordedJudges(s);
  const { engine } = createRefereeEngine({ store, ...(judges.judge ? { judge: judges.judge } : {}), ...(judges.panel ? { panel: judges.panel } : {}) });
  const o = await (s.openedWithout === 'referee' ? createEngine({ store }) : engine).open(s.spec);
  if (!o.ok) throw new Error(o.message);
  for (let i = 0; i < s.steps.length; i++) {
    const st = s.steps[i]!;
    const f = await engine.frame({ sessionId: o.sessionId, ordinal: i - 1, time: st.time, ...(st.data === undefined ? {} : { data: st.data }) });
    if (!f.ok) throw new Error(f.message);
    judges.load(st);
    const body = st.authored === undefined ? { kind: 'stand-down' as const, failureClass: 'timeout' as const } : { kind: 'authored' as const, bytes: enc.encode(st.authored) };
    const t = await engine.turn({ sessionId: o.sessionId, ordinal: i - 1, parentHash: f.entryHash, frameRoot: f.frameRoot, body });
    if (!t.ok) throw new Error(t.message);
  }
  const fin = await engine.finalize(o.sessionId);
  if (!fin.ok) throw new Error(fin.message);
  const lines: string[] = [];
  for await (const l of engine.exportEntries(o.sessionId)) lines.push(new TextDecoder().decode(l));
  return lines;
}

/** The code at `at` (intent, policy, verdict or transitions/<k>) of a ruling, with its stage. */
function codeAt(ruling: Record<string, unknown>, at: string): { stage?: unknown; code?: unknown } {
  const [head, k] = at.split('/');
  const v = k === undefined ? ruling[head!] : (ruling[head!] as unknown[] | undefined)?.[Number(k)];
  const o = (v ?? {}) as { stage?: unknown; code?: unknown; op?: unknown };
  return k === undefined ? { stage: o.stage, code: o.code } : { stage: 'ticket', code: o.code };
}

/** A replay result in the corpus's terms (a diverged ruling's code: its verdict, policy or intent refusal). */
function replayAnswer(r: ReplayResult): ReplayExpect {
  if (r.ok) return { ok: true, turns: r.turns, rulings: r.rulings };
  if (r.stage !== 'replay') return { ok: false, stage: r.stage, index: r.index, code: r.code };
  const d = r.divergences[0]!;
  const a = (d.kind === 'ruling-diverged' ? d.actual : undefined) as Record<string, { code?: string } | undefined> | undefined;
  const code = a?.['verdict']?.code ?? a?.['policy']?.code ?? a?.['intent']?.code;
  return { ok: false, stage: 'replay', index: d.index, kind: d.kind, ...(code === undefined ? {} : { code }) };
}

describe('ruling vectors: coverage of the closed vocabularies', () => {
  it('every intent code and every referee code has a scenario whose ruling carries it', () => {
    const missing = [...INTENT_CODES, ...REFEREE_CODES].filter((code) => !cases.some((c) => c.code === code && c.expect.code === code));
    expect(missing).toEqual([]);
  });

  it.each(cases.map((c) => [c.name, c] as const))('the recorded transcript carries the code where expect says (an edited one: replay re-derives it): %s', (_n, c) => {
    if (c.live === false) {
      expect(c.expect.replay).toMatchObject({ ok: false, index: c.expect.index, code: c.code });
      return;
    }
    const ruling = (JSON.parse(c.lines[c.expect.index]!) as { kind: string; ruling?: Record<string, unknown> });
    expect(ruling.kind).toBe('turn');
    expect(codeAt(ruling.ruling ?? {}, c.expect.at)).toEqual({ stage: c.expect.stage, code: c.expect.code });
  });
});

describe('ruling vectors: every runner agrees with every expected result', () => {
  it('live: the referee engine, given the scenario\'s inputs and judge answers, writes exactly the recorded transcript', async () => {
    const wrong: string[] = [];
    for (const c of cases.filter((x) => x.live !== false)) {
      const got = await live(c);
      if (JSON.stringify(got) !== JSON.stringify(c.lines)) wrong.push(`${c.name}: first different line ${got.findIndex((l, i) => l !== c.lines[i])}`);
    }
    expect(wrong).toEqual([]);
  });

  it('MCP session tools (in-process): session_open, session_frame, session_turn, session_finalize seal the recorded transcript', async () => {
    const wrong: string[] = [];
    // An invalid mandate is sealed only by an engine without the referee: the MCP server fronts one engine.
    for (const c of cases.filter((x) => x.live !== false && x.openedWithout === undefined)) {
      const judges = recordedJudges(c);
      const { engine } = createRefereeEngine({ ...(judges.judge ? { judge: judges.judge } : {}), ...(judges.panel ? { panel: judges.panel } : {}) });
      const server = createMcpServer(localBackend(new WireService(engine)));
      const [a, b] = InMemoryTransport.createLinkedPair();
      await server.connect(a);
      const client = new Client({ name: 'rulings', version: '1.0.0' });
      await client.connect(b);
      const call = async (name: string, args: Record<string, unknown>) => {
        const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
        if (r.isError) throw new Error(`${c.name}: ${name}: ${JSON.stringify(r.structuredContent)}`);
        return r.structuredContent!;
      };
      try {
        const { sessionId } = (await call('session_open', { spec: c.spec })) as { sessionId: string };
        for (let i = 0; i < c.steps.length; i++) {
          const st = c.steps[i]!;
          const f = (await call('session_frame', { sessionId, ordinal: i - 1, time: st.time, ...(st.data === undefined ? {} : { data: st.data }) })) as { entryHash: string; frameRoot: string };
          judges.load(st);
          const body = st.authored === undefined ? { kind: 'stand-down', failureClass: 'timeout' } : { kind: 'authored', text: st.authored };
          await call('session_turn', { sessionId, ordinal: i - 1, parentHash: f.entryHash, frameRoot: f.frameRoot, body });
        }
        const fin = (await call('session_finalize', { sessionId })) as { receipt: { receiptRoot: string; size: number } };
        const want = await verifyBundle([enc.encode(c.lines.join('\n') + '\n')]);
        if (!want.ok || fin.receipt.receiptRoot !== want.receiptRoot || fin.receipt.size !== c.lines.length) wrong.push(`${c.name}: receipt ${JSON.stringify(fin.receipt)}`);
      } finally {
        await client.close();
        await server.close();
      }
    }
    expect(wrong).toEqual([]);
  });

  it('library replay with the referee ruler', async () => {
    const got = [];
    for (const c of cases) got.push(replayAnswer(await replay([enc.encode(c.lines.join('\n') + '\n')], { ruler: (store) => createRefereeRuler({ store }) })));
    expect(got).toEqual(cases.map((c) => c.expect.replay));
  });

  it('tally replay --ruler referee --json (spawned)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-rulings-'));
    const runs = await cliBatch(cases.map((c, i) => {
      const file = join(dir, `${i}.jsonl`);
      writeFileSync(file, c.lines.join('\n') + '\n');
      return ['replay', file, '--ruler', 'referee', '--json'];
    }));
    const got = runs.map((r) => replayAnswer(JSON.parse(r.stdout) as ReplayResult));
    expect(got).toEqual(cases.map((c) => c.expect.replay));
    runs.forEach((r, i) => expect(r.code, cases[i]!.name).toBe(cases[i]!.expect.replay.ok ? 0 : 1));
  });
});

