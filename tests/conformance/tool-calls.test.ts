/**
 * tool-calls.json (PROTOCOL.md §14, §18): one scenario per tool-call ruling
 * code. Driven again through a fresh referee engine from its spec and steps,
 * each writes exactly the recorded lines; the last call's ruling is the
 * expected one; the bundle verifies; replay answers expect.replay. A
 * mutation (an admitted ruling written in place of a refusal, hashes
 * re-linked) is caught by replay.
 */
import { describe, expect, it } from 'vitest';
import { sha256, verifyBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { entryHash, rfc6962Hasher, rootFromLeafHashes, toHex, canonicalJson, type CanonicalValue } from '../../src/protocol/index.js';
import { replay } from '../../src/receipt/index.js';
import { createRefereeEngine, createRefereeRuler } from '../../src/referee/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { loadVectors } from './corpus.js';
// @ts-expect-error the generator is plain JavaScript (it builds the judge clients a case names)
import { corpusJudges } from '../../scripts/vectors/tool-calls.mjs';

interface Case {
  name: string;
  code: string;
  spec: Record<string, unknown>;
  openedWithout?: 'referee';
  judge?: { answer: 'ALLOW' | 'DENY' | 'none'; key: string; model: string };
  steps: { time: number; data: Record<string, unknown>; authored?: string }[];
  lines: string[];
  expect: { index: number; tool: Record<string, unknown>; replay: Record<string, unknown> };
}
const cases = loadVectors<{ cases: Case[] }>('tool-calls.json').cases;
const enc = new TextEncoder();
const dec = new TextDecoder();

async function drive(c: Case): Promise<string[]> {
  const store = new MemoryStore();
  const { engine } = createRefereeEngine({ store, ...(c.judge === undefined ? {} : { panel: corpusJudges(c.judge) }) });
  const o = await (c.openedWithout ? createEngine({ store }) : engine).open(c.spec);
  if (!o.ok) throw new Error(o.message);
  for (let i = 0; i < c.steps.length; i++) {
    const s = c.steps[i]!;
    const f = await engine.frame({ sessionId: o.sessionId, ordinal: i - 1, time: s.time, data: s.data as CanonicalValue });
    if (!f.ok) throw new Error(f.message);
    if (s.authored === undefined) continue;
    const t = await engine.turn({ sessionId: o.sessionId, ordinal: i - 1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(s.authored) } });
    if (!t.ok) throw new Error(t.message);
  }
  const fin = await engine.finalize(o.sessionId);
  if (!fin.ok) throw new Error(fin.message);
  const lines: string[] = [];
  for await (const l of engine.exportEntries(o.sessionId)) lines.push(dec.decode(l));
  return lines;
}

const replayOf = async (lines: string[]) => {
  const r = await replay([enc.encode(lines.join('\n') + '\n')], { ruler: (s) => createRefereeRuler({ store: s }) });
  return r.ok ? { ok: true, turns: r.turns, rulings: r.rulings } : r;
};

describe('tool-calls.json', () => {
  it('has a scenario for every tool-call code', () => {
    expect(new Set(cases.map((c) => c.code))).toEqual(new Set(['admitted', 'tool_call_malformed', 'tool_call_not_canonical', 'tool_call_id_conflict', 'mandate_invalid', 'mandate_not_started', 'mandate_expired', 'tool_not_offered', 'tool_not_allowed', 'server_not_allowed', 'tool_argument_refused', 'tool_rate_limited', 'tool_budget_exceeded', 'judge_denied', 'judge_unavailable']));
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_n, c) => {
    expect(await drive(c)).toEqual(c.lines);
    const ruling = (JSON.parse(c.lines[c.expect.index]!) as { ruling?: { tool?: unknown } }).ruling?.tool;
    expect(ruling).toEqual(c.expect.tool);
    expect(ruling).toMatchObject(c.code === 'admitted' ? { admitted: true } : { admitted: false, code: c.code });
    expect(await verifyBundle([enc.encode(c.lines.join('\n') + '\n')])).toMatchObject({ ok: true, sealed: true });
    expect(await replayOf(c.lines)).toMatchObject(c.expect.replay);
  });

  it.each(['tool_argument_refused', 'tool_budget_exceeded', 'server_not_allowed', 'tool_not_offered', 'judge_denied'])('an admitted ruling written over a %s refusal (hashes re-linked, seal recomputed) fails replay', async (code) => {
    const c = cases.filter((x) => x.code === code).at(-1)!;
    const entries = c.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const name = (c.expect.tool['name'] as string | undefined) ?? 'pay';
    (entries[c.expect.index] as { ruling: unknown }).ruling = { tool: { admitted: true, name, stage: 'tool' } };
    const hashes: string[] = [];
    const out: string[] = [];
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (i > 0) e['parent'] = hashes[i - 1];
      if (e['kind'] === 'finalize') e['root'] = toHex(rootFromLeafHashes(rfc6962Hasher(sha256), hashes.map((h) => Buffer.from(h, 'hex'))));
      const line = canonicalJson(e as CanonicalValue);
      out.push(line);
      hashes.push(toHex(entryHash(sha256, enc.encode(line))));
    }
    expect(await verifyBundle([enc.encode(out.join('\n') + '\n')])).toMatchObject({ ok: true });
    const r = await replayOf(out);
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r)).toMatch(/ruling-diverged/);
  });
});
