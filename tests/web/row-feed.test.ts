/**
 * The rows worker builds a loaded day's rows from `JSON.parse` of its lines
 * (rows-worker.ts), beside the verifier: for every entry the verifier
 * verifies, that row must be exactly the row of the verifier's own entry
 * (what `collect` built before). Checked on random engine days (arbitrary
 * frame data and authored text, fast-check with its seed printed), on a demo
 * day with signed rulings, and on every bundle case of docs/vectors.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeBundle, sha256 } from '../../src/codec/index.js';
import { runDemo } from '../../src/demo/index.js';
import { verifyChunks } from '../../src/protocol/index.js';
import { createEngine } from '../../src/session/index.js';
import { frameTimeOf, rowOf, rowOfLine, type Row } from '../../src/web/browser/rows.js';
import { joinRowParts, rowSplits } from '../../src/web/browser/row-parts.js';
import { bundleBytes, bundleCases } from '../conformance/corpus.js';

const enc = new TextEncoder();

/** The rows of `bundle`'s lines from byte `offset` (line `base`) to `end`, at most `most`, built as a rows worker builds its part: no frame time before it. */
function partRows(bundle: Uint8Array, base: number, offset: number, end: number, most = Infinity): Row[] {
  const rows: Row[] = [];
  let t: number | undefined;
  let start = offset;
  for (let nl = bundle.indexOf(0x0a, start); nl >= 0 && nl < end && rows.length < most; nl = bundle.indexOf(0x0a, start)) {
    const row = rowOfLine(base + rows.length, bundle.subarray(start, nl), t);
    t = frameTimeOf(row) ?? t;
    rows.push(row);
    start = nl + 1;
  }
  return rows;
}

/** The rows of the verified entries as the verifier's entries give them (the reference), and the rows read from the lines. */
async function bothRows(bundle: Uint8Array): Promise<{ reference: Row[]; fromLines: Row[] }> {
  const reference: Row[] = [];
  let frameTime: number | undefined;
  await verifyChunks(sha256, [bundle], {
    requireSealed: false,
    onEntry: (e, line) => {
      if (e.entry.kind === 'frame') frameTime = e.entry.time;
      reference.push(rowOf(e.index, '', line.length, e.entry, frameTime));
    },
  });
  return { reference, fromLines: partRows(bundle, 0, 0, bundle.length, reference.length) };
}

const json: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 });

describe('rows read from the lines', () => {
  it('are the rows of the verifier entries on random days', async () => {
    const seed = Number(process.env['TALLY_SEED'] ?? Date.now() % 1_000_000);
    console.log(`row-feed seed ${seed}`);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ data: fc.option(json, { nil: undefined }), text: fc.oneof(fc.string(), json.map((v) => JSON.stringify({ intent: v }))), stand: fc.boolean() }), { maxLength: 12 }), fc.boolean(), async (wakes, seal) => {
        const engine = createEngine();
        const open = await engine.open({ name: 'rows', day: '2026-12-03' });
        if (!open.ok) throw new Error(open.message);
        const sid = open.sessionId;
        for (let i = 0; i < wakes.length; i++) {
          const w = wakes[i]!;
          const f = await engine.frame({ sessionId: sid, ordinal: i - 1, time: 1_000 + i, ...(w.data === undefined || w.data === null ? {} : { data: w.data as never }) });
          if (!f.ok) continue;
          const body = w.stand ? ({ kind: 'stand-down', failureClass: 'timeout' } as const) : ({ kind: 'authored', bytes: enc.encode(w.text) } as const);
          const t = await engine.turn({ sessionId: sid, ordinal: i - 1, parentHash: f.entryHash, frameRoot: f.frameRoot, body });
          if (!t.ok) throw new Error(t.message);
        }
        if (seal) await engine.finalize(sid);
        const lines: Uint8Array[] = [];
        for await (const l of engine.exportEntries(sid)) lines.push(l);
        const { reference, fromLines } = await bothRows(encodeBundle(lines));
        expect(reference.length).toBe(lines.length);
        expect(fromLines).toEqual(reference);
      }),
      { seed, numRuns: 60 },
    );
  }, 120_000);

  it('are the rows of the verifier entries on a demo day with signed rulings', async () => {
    const out = mkdtempSync(join(tmpdir(), 'tally-rows-'));
    try {
      await runDemo({ seed: 3, wakes: 24, out, db: 'memory:' });
      const { reference, fromLines } = await bothRows(new Uint8Array(readFileSync(join(out, 'bundle.jsonl'))));
      expect(reference.some((r) => r.verdict !== undefined || r.code === 'admitted')).toBe(true);
      expect(fromLines).toEqual(reference);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);

  it('are the rows of the verified prefix of every vector bundle', async () => {
    for (const c of bundleCases()) {
      const { reference, fromLines } = await bothRows(bundleBytes(c));
      expect(fromLines, c.name).toEqual(reference);
    }
  });
});


/** Line start offsets of `bundle`. */
function lineOffsets(bundle: Uint8Array): number[] {
  const out: number[] = [];
  for (let at = 0; at < bundle.length; at = bundle.indexOf(0x0a, at) + 1) out.push(at);
  return out;
}

describe('rows built in parts (row-parts.ts)', () => {
  it('join into the rows of one pass, wherever the day is split', async () => {
    const seed = Number(process.env['TALLY_SEED'] ?? Date.now() % 1_000_000);
    console.log(`row-parts seed ${seed}`);
    const out = mkdtempSync(join(tmpdir(), 'tally-row-parts-'));
    try {
      await runDemo({ seed: 5, wakes: 30, out, db: 'memory:' });
      const bundle = new Uint8Array(readFileSync(join(out, 'bundle.jsonl')));
      const { fromLines } = await bothRows(bundle);
      const offsets = lineOffsets(bundle);
      const n = fromLines.length;
      await fc.assert(
        fc.property(fc.uniqueArray(fc.integer({ min: 1, max: n - 1 }), { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: n }), (cuts, count) => {
          const starts = [0, ...cuts.sort((a, b) => a - b)];
          const parts = starts.map((s, k) => partRows(bundle, s, offsets[s]!, k + 1 < starts.length ? offsets[starts[k + 1]!]! : bundle.length));
          expect(joinRowParts(parts, starts, count)).toEqual(fromLines.slice(0, count));
        }),
        { seed, numRuns: 200 },
      );
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);

  it('give the turns at the start of a part the time of the frame they answer, and bare rows where a part ended early', () => {
    const frame: Row = { i: 0, kind: 'frame', hash: '', bytes: 1, time: 7 };
    const turn: Row = { i: 1, kind: 'turn', hash: '', bytes: 1 };
    const joined = joinRowParts([[frame], [{ ...turn }]], [0, 1], 3);
    expect(joined[1]!.time).toBe(7);
    expect(joined[2]).toEqual({ i: 2, kind: 'unverified', hash: '', bytes: 0 });
  });

  it('split a day at the line offsets the verifier found, one part per core, none for a small day', () => {
    const offsets = Array.from({ length: 4096 }, (_, i) => 10 * i);
    expect(rowSplits(offsets, 4096, 2)).toEqual([{ index: 2048, offset: 20480 }]);
    expect(rowSplits(offsets, 4096, 4).map((s) => s.index)).toEqual([1024, 2048, 3072]);
    expect(rowSplits(offsets, 100, 4)).toEqual([]);
    expect(rowSplits(offsets, 4096, 1)).toEqual([]);
  });
});
