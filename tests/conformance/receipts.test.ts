/**
 * receipts.json (PROTOCOL.md §11.2–§11.4, §14) through every receipt verifier
 * besides the library's (corpus.test.ts): `tally verify-proof` (spawned) and
 * the Python verifier written from PROTOCOL.md (tests/golden/verify_receipt.py).
 * The MCP server has no receipt tool (its `verify` takes bundles), so it has
 * nothing to run here.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliBatch, spawnOut } from './cli.js';
import { VECTORS, loadVectors } from './corpus.js';

interface Receipts {
  verifierKeys: string[];
  checkpoints: { name: string; note: string; expect: { ok: boolean; code?: string; sessionId?: string; size?: number; root?: string } }[];
  turnReceipts: { name: string; text: string; expect: { ok: true; index: number; sessionId: string; size: number } | { ok: false; stage: string; code: string } }[];
}
const v = loadVectors<Receipts>('receipts.json');
const hasPython = spawnSync('python3', ['--version']).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'tally-receipts-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const keyArgs = v.verifierKeys.flatMap((k) => ['--key', k]);

describe('receipt vectors: tally verify-proof (spawned)', () => {
  it('verifies every single-turn receipt with its expected result', async () => {
    const runs = await cliBatch(v.turnReceipts.map((c, i) => ['verify-proof', file(`r${i}.tlog-proof`, c.text), ...keyArgs, '--json']));
    const got = runs.map((r) => {
      const o = JSON.parse(r.stdout) as { ok: boolean; index?: number; sessionId?: string; checkpoint?: { size: number }; stage?: string; code?: string };
      return o.ok ? { ok: true, index: o.index, sessionId: o.sessionId, size: o.checkpoint?.size } : { ok: false, stage: o.stage, code: o.code };
    });
    expect(got).toEqual(v.turnReceipts.map((c) => c.expect));
    runs.forEach((r, i) => expect(r.code).toBe(v.turnReceipts[i]!.expect.ok ? 0 : 1));
  });

  it('opens every checkpoint as --checkpoint, or refuses it with the expected code', async () => {
    const receipt = file('golden.tlog-proof', v.turnReceipts[0]!.text);
    const runs = await cliBatch(v.checkpoints.map((c, i) => ['verify-proof', receipt, ...keyArgs, '--checkpoint', file(`c${i}.note`, c.note), '--json']));
    const wrong = v.checkpoints.flatMap((c, i) => {
      const o = JSON.parse(runs[i]!.stdout) as { ok: boolean; stage?: string; code?: string };
      const refused = !o.ok && o.stage!.startsWith('pinned-checkpoint-');
      // An opened checkpoint pins the receipt: one of the golden tree verifies it, any other fails a later stage.
      const golden = v.checkpoints[0]!.expect;
      const sameTree = c.expect.sessionId === golden.sessionId && c.expect.size === golden.size && c.expect.root === golden.root;
      const agrees = c.expect.ok ? !refused && o.ok === sameTree : refused && o.code === c.expect.code;
      return agrees ? [] : [`${c.name}: ${runs[i]!.stdout}`];
    });
    expect(wrong).toEqual([]);
  });
});

describe.skipIf(!hasPython)('receipt vectors: the Python verifier written from PROTOCOL.md', () => {
  it('python3 tests/golden/verify_receipt.py --corpus gives every checkpoint and turn receipt its expected result', async () => {
    const out = JSON.parse(await spawnOut('python3', [join(import.meta.dirname, '../golden/verify_receipt.py'), '--corpus', join(VECTORS, 'receipts.json')])) as { checkpoints: unknown[]; turnReceipts: unknown[] };
    expect(out.checkpoints).toEqual(v.checkpoints.map((c) => c.expect));
    expect(out.turnReceipts).toEqual(v.turnReceipts.map((c) => c.expect));
  });
});
