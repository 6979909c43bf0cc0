/**
 * The conformance corpus (docs/vectors/, PROTOCOL.md §14): it is exactly what
 * the generator makes from the engine today, and every verifier in the
 * project — library (sequential and parallel), CLI (plain and --parallel),
 * MCP `verify`, the Python verifier — gives each case its expected result.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256, verifyBundle } from '../../src/codec/index.js';
import { canonicalJson, entryHash, parseStrictJson, taggedHash, toHex, type CanonicalValue } from '../../src/protocol/index.js';
import { openSessionCheckpoint, verifyTurnReceipt } from '../../src/receipt/index.js';
import { VECTORS, bundleCases, loadVectors } from './corpus.js';
import { RUNNERS, type Outcome } from './runners.js';

const GENERATOR = join(import.meta.dirname, '../../scripts/gen-vectors.mjs');
const hasPython = spawnSync('python3', ['--version']).status === 0;

describe('the committed corpus', () => {
  it('is byte for byte what scripts/gen-vectors.mjs makes from the built engine (run it after a deliberate byte-rule change)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tally-vectors-'));
    const r = spawnSync(process.execPath, [GENERATOR, dir], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const files = readdirSync(dir).sort();
    expect(readdirSync(VECTORS).filter((f) => f !== 'schema.json' && f !== 'README.md').sort()).toEqual(files);
    for (const f of files) expect(readFileSync(join(dir, f)).equals(readFileSync(join(VECTORS, f))), f).toBe(true);
  });

  it('every file names the corpus version of protocol tally/1', () => {
    for (const f of readdirSync(VECTORS).filter((n) => n.endsWith('.json') && n !== 'schema.json')) expect(loadVectors<{ version: string }>(f).version, f).toBe('tally/1-corpus/1');
  });
});

describe('canonical JSON vectors (§2, §2.1)', () => {
  const v = loadVectors<{ accept: { name: string; hex: string }[]; refuse: { name: string; hex: string; lineCode: string; parserCode: string }[] }>('canonical.json');
  it.each(v.accept.map((c) => [c.name, c] as const))('accepts %s: strict parse, and the canonical re-encoding is the same bytes', (_n, c) => {
    const bytes = Buffer.from(c.hex, 'hex');
    const p = parseStrictJson(bytes);
    expect(p.ok).toBe(true);
    if (p.ok) expect(Buffer.from(canonicalJson(p.value as CanonicalValue)).equals(bytes)).toBe(true);
  });
  it.each(v.refuse.map((c) => [c.name, c] as const))('refuses %s, and a bundle line of those bytes with its lineCode', async (_n, c) => {
    const bytes = Buffer.from(c.hex, 'hex');
    const p = parseStrictJson(bytes);
    if (c.parserCode === 'not-canonical') {
      let same = false;
      if (p.ok) {
        try {
          same = Buffer.from(canonicalJson(p.value as CanonicalValue)).equals(bytes);
        } catch {
          same = false; // outside canonical JSON (null, a fraction, an unsafe integer)
        }
      }
      expect(p.ok && !same).toBe(true);
    } else expect(p).toMatchObject({ ok: false, code: c.parserCode });
    expect(await verifyBundle([bytes, Buffer.from('\n')])).toMatchObject({ ok: false, index: 0, code: c.lineCode });
  });
});

describe('entry hash vectors (§3, §4)', () => {
  const v = loadVectors<{ cases: { name: string; line: string; entryHash: string; frameRootPreimage?: string; frameRoot?: string; authoredHex?: string; authoredHash?: string }[] }>('entries.json');
  it.each(v.cases.map((c) => [c.name, c] as const))('%s', (_n, c) => {
    expect(toHex(entryHash(sha256, Buffer.from(c.line, 'utf8')))).toBe(c.entryHash);
    if (c.frameRootPreimage !== undefined) expect(toHex(taggedHash(sha256, 'tally/v1/frame-root', Buffer.from(c.frameRootPreimage, 'utf8')))).toBe(c.frameRoot);
    if (c.authoredHex !== undefined) expect(toHex(taggedHash(sha256, 'tally/v1/authored', Buffer.from(c.authoredHex, 'hex')))).toBe(c.authoredHash);
  });
});

/** The part of an outcome the corpus pins. */
function pinned(o: Outcome): Record<string, unknown> {
  return o.ok ? { ok: true, sessionId: o.sessionId, size: o.size, receiptRoot: o.receiptRoot, sealed: o.sealed } : { ok: false, index: o.index, code: o.code };
}

describe('bundle vectors (§5): every verifier agrees with every expected result', () => {
  const cases = bundleCases();
  for (const runner of RUNNERS) {
    it.skipIf(runner.name.startsWith('Python') && !hasPython)(runner.name, async () => {
      const put = cases.filter((c) => runner.cannot?.(c) === undefined);
      const got = await runner.run(put);
      expect(got).toHaveLength(put.length);
      const wrong = put.flatMap((c, i) => {
        const g = pinned(got[i]!);
        const want = c.expect.ok ? c.expect : { ok: false, index: c.expect.index, code: c.expect.code };
        return JSON.stringify(g) === JSON.stringify(want) ? [] : [`${c.name}: expected ${JSON.stringify(want)}, got ${JSON.stringify(g)}`];
      });
      expect(wrong).toEqual([]);
      // A runner may leave out only what its interface cannot express, never a whole kind of error.
      expect(cases.length - put.length).toBeLessThanOrEqual(3);
    });
  }
});

describe('signed checkpoint and single-turn receipt vectors (§11.2–§11.4)', () => {
  interface Receipts {
    verifierKeys: string[];
    checkpoints: { name: string; note: string; expect: Record<string, unknown> }[];
    turnReceipts: { name: string; text: string; expect: Record<string, unknown> }[];
  }
  const v = loadVectors<Receipts>('receipts.json');
  it.each(v.checkpoints.map((c) => [c.name, c] as const))('openSessionCheckpoint: %s', (_n, c) => {
    const r = openSessionCheckpoint(c.note, v.verifierKeys);
    expect(r.ok ? { ok: true, engineName: r.checkpoint.engineName, sessionId: r.checkpoint.sessionId, size: r.checkpoint.size, root: r.checkpoint.root } : { ok: false, code: r.code }).toEqual(c.expect);
  });
  it.each(v.turnReceipts.map((c) => [c.name, c] as const))('verifyTurnReceipt: %s', (_n, c) => {
    const r = verifyTurnReceipt(c.text, { verifiers: v.verifierKeys });
    expect(r.ok ? { ok: true, index: r.index, sessionId: r.checkpoint.sessionId, size: r.checkpoint.size } : { ok: false, stage: r.stage, code: r.code }).toEqual(c.expect);
  });
});
