import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyBundle, verifyBundleFile } from '../../src/codec/index.js';
import { naiveVerify } from './naive.js';

const here = import.meta.dirname;
const bundlePath = join(here, 'transcript.jsonl');
const bundle = readFileSync(bundlePath);
const golden = JSON.parse(readFileSync(join(here, 'golden.json'), 'utf8')) as {
  sessionId: string;
  entryHashes: string[];
  receipt: { sessionId: string; size: number; receiptRoot: string; head: string };
};

describe('golden transcript', () => {
  it('the engine regenerates it byte for byte from the same inputs (built package)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-golden-'));
    execFileSync(process.execPath, [resolve(here, '../../scripts/gen-golden.mjs'), dir], { stdio: 'pipe' });
    expect(readFileSync(join(dir, 'transcript.jsonl')).equals(bundle)).toBe(true);
    expect(readFileSync(join(dir, 'golden.json'), 'utf8')).toBe(readFileSync(join(here, 'golden.json'), 'utf8'));
  });

  it('verifies with the streaming verifier and matches the committed receipt', async () => {
    const r = await verifyBundleFile(bundlePath, { pin: { receiptRoot: golden.receipt.receiptRoot } });
    expect(r).toMatchObject({ ok: true, sessionId: golden.sessionId, size: golden.receipt.size, receiptRoot: golden.receipt.receiptRoot, head: golden.receipt.head, sealed: true });
  });

  it('an independent naive implementation agrees on every hash', () => {
    const n = naiveVerify(bundle);
    expect(n.ok).toBe(true);
    expect(n.sessionId).toBe(golden.sessionId);
    expect(n.entryHashes).toEqual(golden.entryHashes);
    expect(n.receiptRoot).toBe(golden.receipt.receiptRoot);
  });

  it('both implementations reject every single-bit mutation of every line', async () => {
    let checked = 0;
    for (let i = 0; i < bundle.length; i += 7) {
      for (const bit of [0x01, 0x20]) {
        const b = Buffer.from(bundle);
        b[i] = b[i]! ^ bit;
        const engine = await verifyBundle([b], { pin: { receiptRoot: golden.receipt.receiptRoot } });
        const naive = naiveVerify(b);
        const naivePinned = naive.ok && naive.receiptRoot === golden.receipt.receiptRoot;
        expect(engine.ok, `byte ${i} bit ${bit}`).toBe(false);
        expect(naivePinned, `byte ${i} bit ${bit} (naive)`).toBe(false);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });
});
