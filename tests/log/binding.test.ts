/**
 * A day's log binding (PROTOCOL.md §15.5) on every store: the seal
 * checkpoint's leaf proved in a signed engine-log checkpoint, made from the
 * store's own log and checked with the log key alone; another day's leaf,
 * a checkpoint the log never saw, or another log key are refused with their
 * TALLY_LOG_* codes. Then the command line: `tally export --log-key` writes
 * it, and `verify`, `verify-proof`, `replay` and `grade verify` with
 * `--log-key` require it.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { EngineLog, logBinding, verifyLogBinding } from '../../src/log/index.js';
import { createNotary, generateEngineKey, loadOrCreateEngineKey } from '../../src/receipt/index.js';
import { openStore, type EngineLogStore, type TranscriptStore } from '../../src/store/index.js';
import { STORE_KINDS } from '../store/helpers/stores.js';
import { removeTempDirs, tempDir } from '../store/helpers/tmp.js';
import { warnIfSkipped } from '../store/helpers/pg.js';
import { inProcess } from '../cli/in-process.js';
import { drive } from './day.js';

warnIfSkipped('binding.test.ts');
afterAll(removeTempDirs);

const engineKey = generateEngineKey('tally.example/desk');
const logKey = generateEngineKey('tally.example/desk/log');

describe.each(STORE_KINDS.map((k) => [k.label, k] as const))('log binding on %s', (_label, kind) => {
  it.skipIf(kind.skip)('the seal is proved in the store’s log; another day, an unlogged checkpoint or another key is refused', async () => {
    const env = await kind.fresh();
    try {
      const store = env.store as TranscriptStore & EngineLogStore;
      const engine = createEngine({ store });
      const notary = createNotary({ key: engineKey });
      const a = await drive(engine, 'bind-a', 3);
      const b = await drive(engine, 'bind-b', 2);
      const sealA = await notary.sealWithReceipt(engine, a);
      if (!sealA.ok) throw new Error(sealA.message);
      const cpB = await notary.issueCheckpoint(engine, b, 3);
      if (!cpB.ok) throw new Error(cpB.message);
      const log = new EngineLog({ store, key: logKey, minIntervalMs: 0 });
      const seal = { origin: sealA.checkpoint.origin, size: sealA.checkpoint.size, root: sealA.checkpoint.root };
      const text = await logBinding(log, seal);
      const ok = verifyLogBinding(text, { logVerifiers: [logKey.verifierKey], checkpoint: seal, seal: true });
      expect(ok).toMatchObject({ ok: true, leaf: { kind: 'checkpoint', ...seal, seal: true }, log: { origin: logKey.name, size: 4 } });

      // B's binding shown for A's day; A's seal where a non-seal is expected.
      const textB = await logBinding(log, { origin: cpB.origin, size: cpB.size, root: cpB.root });
      expect(verifyLogBinding(textB, { logVerifiers: [logKey.verifierKey], checkpoint: seal })).toMatchObject({ ok: false, code: 'TALLY_LOG_LEAF_MISMATCH' });
      expect(verifyLogBinding(text, { logVerifiers: [logKey.verifierKey], checkpoint: seal, seal: false })).toMatchObject({ ok: false, code: 'TALLY_LOG_LEAF_MISMATCH' });
      // The engine key does not open the log's checkpoint; nor does another log key.
      expect(verifyLogBinding(text, { logVerifiers: [engineKey.verifierKey], checkpoint: seal })).toMatchObject({ ok: false, code: 'TALLY_LOG_UNSIGNED' });
      expect(verifyLogBinding(text, { logVerifiers: [generateEngineKey(logKey.name).verifierKey], checkpoint: seal })).toMatchObject({ ok: false, code: 'TALLY_LOG_UNSIGNED' });
      // A checkpoint signed outside the signing log (no store) has no leaf: no binding can be made for it.
      await expect(logBinding(log, { ...seal, root: 'ab'.repeat(32) })).rejects.toMatchObject({ code: 'TALLY_LOG_NOT_LOGGED' });

      // The log grows (B sealed): A's binding in the newer, larger log checkpoint still verifies, at the same index.
      await notary.sealWithReceipt(engine, b);
      const later = await logBinding(log, seal);
      expect(verifyLogBinding(later, { logVerifiers: [logKey.verifierKey], checkpoint: seal, seal: true })).toMatchObject({ ok: true, index: ok.ok ? ok.index : -1, log: { size: 5 } });
    } finally {
      await env.dispose();
    }
  });
});

describe('the command line requires the binding with --log-key', async () => {
  const dir = tempDir('log-binding-cli');
  const db = join(dir, 'tally.db');
  const ek = join(dir, 'engine.key');
  const lk = join(dir, 'log.key');
  await loadOrCreateEngineKey(ek, 'tally.example/desk');
  await loadOrCreateEngineKey(lk, 'tally.example/desk/log');
  const store = await openStore(db);
  const engine = createEngine({ store });
  const a = await drive(engine, 'cli-a', 3);
  const b = await drive(engine, 'cli-b', 2);
  for (const s of [a, b]) {
    const f = await engine.finalize(s);
    if (!f.ok) throw new Error(f.message);
  }
  await store.close();
  const run = (args: string[]) => inProcess(args, { cwd: dir, env: {} });
  const outA = join(dir, 'a');
  const outB = join(dir, 'b');

  it('tally export --log-key writes the binding and the log key', async () => {
    for (const [sid, out] of [
      [a, outA],
      [b, outB],
    ] as const) {
      const r = await run(['export', '--db', db, '--session', sid, '--out', out, '--key', ek, '--log-key', lk, '--turn-receipts', '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).files).toMatchObject({ logProof: join(out, 'log-proof.tlog-proof'), logVerifierKey: join(out, 'log.vkey') });
    }
    expect(readFileSync(join(outA, 'log.vkey'), 'utf8')).toMatch(/^tally\.example\/desk\/log\+[0-9a-f]{8}\+/);
    // Without --log-key (and no $TALLY_LOG_KEY) nothing of the log is written.
    const plain = join(dir, 'plain');
    expect((await run(['export', '--db', db, '--session', a, '--out', plain, '--key', ek])).code).toBe(0);
    expect(existsSync(join(plain, 'log-proof.tlog-proof'))).toBe(false);
    // A log key file that does not exist is an I/O error, never created by export.
    const missing = await run(['export', '--db', db, '--session', a, '--out', plain, '--key', ek, '--log-key', join(dir, 'nope.key')]);
    expect(missing.code).toBe(3);
    expect(existsSync(join(dir, 'nope.key'))).toBe(false);
  });

  const pinned = (out: string) => ['--vkey', join(out, 'engine.vkey'), '--checkpoint', join(out, 'receipt.note'), '--log-key', join(out, 'log.vkey')];

  it('tally verify: valid with the binding beside the checkpoint, and says where the day is in the log', async () => {
    const r = await run(['verify', join(outA, 'bundle.jsonl'), ...pinned(outA)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/engine log {3}leaf \d+ of tally\.example\/desk\/log \(size \d+\), the seal, signed by the log key/);
    const j = await run(['verify', join(outA, 'bundle.jsonl'), ...pinned(outA), '--json']);
    expect(JSON.parse(j.stdout).logBinding).toMatchObject({ seal: true, log: { origin: 'tally.example/desk/log' } });
  });

  it('tally verify refuses: the binding missing, another day’s, another log key, --log-proof alone', async () => {
    const lone = join(dir, 'lone');
    mkdirSync(lone, { recursive: true });
    copyFileSync(join(outA, 'receipt.note'), join(lone, 'receipt.note'));
    const missing = await run(['verify', join(outA, 'bundle.jsonl'), '--vkey', join(outA, 'engine.vkey'), '--checkpoint', join(lone, 'receipt.note'), '--log-key', join(outA, 'log.vkey')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('TALLY_LOG_BINDING_MISSING');
    const other = await run(['verify', join(outA, 'bundle.jsonl'), ...pinned(outA), '--log-proof', join(outB, 'log-proof.tlog-proof')]);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('TALLY_LOG_LEAF_MISMATCH');
    const wrongKey = await run(['verify', join(outA, 'bundle.jsonl'), '--vkey', join(outA, 'engine.vkey'), '--checkpoint', join(outA, 'receipt.note'), '--log-key', join(outA, 'engine.vkey')]);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain('TALLY_LOG_UNSIGNED');
    const flipped = join(dir, 'flipped.tlog-proof');
    const text = readFileSync(join(outA, 'log-proof.tlog-proof'), 'utf8');
    const lines = text.split('\n');
    lines[3] = (lines[3]![0] === 'A' ? 'B' : 'A') + lines[3]!.slice(1);
    writeFileSync(flipped, lines.join('\n'));
    const bad = await run(['verify', join(outA, 'bundle.jsonl'), ...pinned(outA), '--log-proof', flipped, '--json']);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, stage: 'log', code: expect.stringMatching(/^TALLY_LOG_(NOT_INCLUDED|PROOF_INVALID)$/) });
    const alone = await run(['verify', join(outA, 'bundle.jsonl'), '--vkey', join(outA, 'engine.vkey'), '--checkpoint', join(outA, 'receipt.note'), '--log-proof', join(outA, 'log-proof.tlog-proof')]);
    expect(alone.code).toBe(2);
  });

  it('tally verify-proof and tally replay take --log-key the same way', async () => {
    const turn = readFileSync(join(outA, 'bundle.jsonl'), 'utf8').split('\n').findIndex((l) => l.includes('"kind":"turn"'));
    const vp = await run(['verify-proof', join(outA, 'turns', `${turn}.tlog-proof`), ...pinned(outA)]);
    expect(vp.code, vp.stderr).toBe(0);
    expect(vp.stdout).toContain('engine log   leaf');
    const vpOther = await run(['verify-proof', join(outA, 'turns', `${turn}.tlog-proof`), ...pinned(outA), '--log-proof', join(outB, 'log-proof.tlog-proof')]);
    expect(vpOther.code).toBe(1);
    expect(vpOther.stderr).toContain('TALLY_LOG_LEAF_MISMATCH');
    const rp = await run(['replay', join(outA, 'bundle.jsonl'), ...pinned(outA), '--ruler', 'none']);
    expect(rp.code, rp.stderr).toBe(0);
    expect(rp.stdout).toContain('of the engine log tally.example/desk/log');
    const rpOther = await run(['replay', join(outA, 'bundle.jsonl'), ...pinned(outA), '--ruler', 'none', '--log-proof', join(outB, 'log-proof.tlog-proof')]);
    expect(rpOther.code).toBe(1);
  });

  it('tally grade verify --log-key: the graded checkpoint must be the seal leaf', async () => {
    const gk = join(dir, 'grader.key');
    const grade = join(dir, 'grade.note');
    expect((await run(['grade', 'sign', join(outA, 'bundle.jsonl'), '--grade', '{"score":7}', '--key', gk, '--name', 'grader.example', '--out', grade])).code).toBe(0);
    const gv = (await run(['grade', 'key', '--key', gk])).stdout.trim();
    const args = ['grade', 'verify', grade, join(outA, 'bundle.jsonl'), '--vkey', gv, '--checkpoint', join(outA, 'receipt.note'), '--engine-key', join(outA, 'engine.vkey'), '--log-key', join(outA, 'log.vkey')];
    const ok = await run(args);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('the seal, signed by the log key');
    const moved = join(outA, 'log-proof.moved');
    renameSync(join(outA, 'log-proof.tlog-proof'), moved);
    try {
      const missing = await run(args);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('TALLY_LOG_BINDING_MISSING');
    } finally {
      renameSync(moved, join(outA, 'log-proof.tlog-proof'));
    }
    const noCheckpoint = await run(['grade', 'verify', grade, join(outA, 'bundle.jsonl'), '--vkey', gv, '--log-key', join(outA, 'log.vkey')]);
    expect(noCheckpoint.code).toBe(2);
  });
});
