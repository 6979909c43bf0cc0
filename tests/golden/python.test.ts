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
import { encodeBundle } from '../../src/codec/index.js';
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
});
