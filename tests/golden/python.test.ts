/**
 * docs/PROTOCOL.md, tested the way it promises: a verifier in another
 * language (Python, standard library only: tests/golden/verify_bundle.py),
 * written from the document alone, must agree with the engine on real
 * bundles and reject their mutations.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeBundle, sha256, verifyBundle } from '../../src/codec/index.js';
import { DOMAIN_TAGS, JSON_MAX_DEPTH, canonicalJson, taggedHash, toHex } from '../../src/protocol/index.js';
import { runDay } from '../helpers/day.js';
import { relink } from '../helpers/relink.js';
import { createEngine } from '../../src/engine.js';
import { Day, carry, frameTime, iso, openIntent, signed } from '../rules/fixtures.js';

const script = join(import.meta.dirname, 'verify_bundle.py');
const python = spawnSync('python3', ['--version'], { encoding: 'utf8' });
const hasPython = python.status === 0;
if (!hasPython) console.warn('python3 not found: skipping the cross-language verifier test (install python3 to run it)');

function py(bytes: Uint8Array): { ok: boolean; receiptRoot?: string; entryHashes?: string[]; index?: number } {
  const dir = mkdtempSync(join(tmpdir(), 'tally-py-'));
  const file = join(dir, 'bundle.jsonl');
  writeFileSync(file, bytes);
  const r = spawnSync('python3', [script, file], { encoding: 'utf8' });
  return JSON.parse(r.stdout) as { ok: boolean; receiptRoot?: string; entryHashes?: string[] };
}

describe.skipIf(!hasPython)('a Python verifier written from PROTOCOL.md', () => {
  it('agrees on the golden transcript', () => {
    const golden = JSON.parse(readFileSync(join(import.meta.dirname, 'golden.json'), 'utf8')) as { entryHashes: string[]; receipt: { receiptRoot: string } };
    const r = py(readFileSync(join(import.meta.dirname, 'transcript.jsonl')));
    expect(r).toMatchObject({ ok: true, receiptRoot: golden.receipt.receiptRoot, entryHashes: golden.entryHashes });
  });

  it('agrees on a day with intent rulings, and rejects mutations of it', async () => {
    const engine = createEngine();
    const day = await Day.open(engine);
    await day.answer(carry(await signed(openIntent({ nonce: 1, ttl: iso(frameTime(-1) + 60_000) })), 'context: café ✓'));
    await day.answer(carry(await signed(openIntent({ nonce: 1, ttl: iso(frameTime(0) + 60_000) }))));
    await day.answer(new TextEncoder().encode('\u0000 raw bytes \u2028'));
    const fin = await engine.finalize(day.sid, { note: 'py' });
    if (!fin.ok) throw new Error(fin.message);
    const lines: Uint8Array[] = [];
    for await (const l of engine.exportEntries(day.sid)) lines.push(l);
    const bundle = encodeBundle(lines);
    expect(py(bundle)).toMatchObject({ ok: true, receiptRoot: fin.receipt.receiptRoot });
    for (const i of [0, 50, 400, bundle.length - 30]) {
      const b = bundle.slice();
      b[i] = b[i]! ^ 0x02;
      const r = py(b);
      expect(r.ok && r.receiptRoot === fin.receipt.receiptRoot, `byte ${i}`).toBe(false);
    }
  });

  it('agrees on the one-encoding rules (§2.1): BOM, duplicate key, lone surrogate, depth and line size, at the same index', async () => {
    const { lines } = await runDay({ wakes: 2 });
    const dec = new TextDecoder();
    const enc = new TextEncoder();
    const nested = (n: number): string => '['.repeat(n) + '1' + ']'.repeat(n);
    // A frame line with `data` spliced in and its frameRoot recomputed from the §4.2 preimage, so
    // only the depth is wrong (the canonical text of nested arrays of 1 is the text itself).
    const deepFrame = (line: string, data: string): Uint8Array => {
      const { data: _old, ...v } = JSON.parse(line) as { data?: unknown; ordinal: number; time: number; frameRoot: string };
      v.frameRoot = toHex(taggedHash(sha256, DOMAIN_TAGS.frameRoot, enc.encode(`{"data":${data},"ordinal":${v.ordinal},"time":${v.time}}`)));
      return enc.encode(`{"data":${data},${canonicalJson(v).slice(1)}`);
    };
    const text = (i: number): string => dec.decode(lines[i]!);
    const cases: Array<[string, number, Uint8Array]> = [
      ['BOM on genesis', 0, Uint8Array.from([0xef, 0xbb, 0xbf, ...lines[0]!])],
      ['BOM on a frame', 3, Uint8Array.from([0xef, 0xbb, 0xbf, ...lines[3]!])],
      ['duplicate key', 0, enc.encode(text(0).replace('{"kind":"genesis",', '{"kind":"genesis","kind":"genesis",'))],
      ['escaped lone surrogate', 0, enc.encode(text(0).replace('"name":"', '"name":"\\ud800'))],
      ['encoded surrogate bytes', 0, Uint8Array.from([...enc.encode(text(0).slice(0, -2)), 0xed, 0xa0, 0x80, ...enc.encode(text(0).slice(-2))])],
      ['a frame at level 65 (with its true frame root)', 1, deepFrame(text(1), nested(JSON_MAX_DEPTH))],
      ['an empty array at level 65 (with its true frame root)', 1, deepFrame(text(1), '['.repeat(JSON_MAX_DEPTH) + ']'.repeat(JSON_MAX_DEPTH))],
      ['a line over 1 MiB', 2, new Uint8Array(1_048_577).fill(0x20)],
    ];
    for (const [name, at, raw] of cases) {
      const forged = name === 'a line over 1 MiB' ? encodeBundle([...lines.slice(0, at), raw, ...lines.slice(at)]) : encodeBundle(relink(lines, at, raw));
      const ts = await verifyBundle([forged]);
      expect(ts, name).toMatchObject({ ok: false, index: at });
      expect(py(forged), name).toMatchObject({ ok: false, index: at });
    }
    // At the limit: data at level 2 with 62 more levels inside reaches level 64 — both accept.
    const engine = createEngine();
    const open = await engine.open({ name: 'py-deep' });
    if (!open.ok) throw new Error(open.message);
    const f = await engine.frame({ sessionId: open.sessionId, ordinal: -1, time: 1, data: JSON.parse(nested(JSON_MAX_DEPTH - 1)) as never });
    if (!f.ok) throw new Error(f.message);
    await engine.turn({ sessionId: open.sessionId, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
    const fin = await engine.finalize(open.sessionId);
    if (!fin.ok) throw new Error(fin.message);
    const deep: Uint8Array[] = [];
    for await (const l of engine.exportEntries(open.sessionId)) deep.push(l);
    expect(py(encodeBundle(deep))).toMatchObject({ ok: true, receiptRoot: fin.receipt.receiptRoot });
  });
});
