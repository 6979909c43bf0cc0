/**
 * The log identity (PROTOCOL.md §15.8) and shard rotation (§15.9), end to end
 * on real SQLite stores through the command line: `tally log identity`
 * writes the identity of shard 1; days exported with shard 1's binding
 * verify under it (`verify`, `verify-proof`, `replay`, `grade verify` with
 * `--log-identity` instead of `--log-key`); rotating to shard 2 (a new store,
 * a new log key and origin, `--succeeds` with shard 1's final checkpoint
 * from `tally tiles export`) gives an identity under which every old day
 * still verifies with its old binding and new days verify with theirs; a
 * grader holding only shard 1's identity follows the chain. Refusals carry
 * their TALLY_LOG_IDENTITY_* codes: a day of a shard the identity does not
 * name, a binding beyond a previous shard's final checkpoint, an expired,
 * unsigned or edited identity, a successor under another root. And `tally
 * serve --log-identity` (a real process) publishes it at `<prefix>/identity`,
 * refusing to start with an identity of another log key.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { loadOrCreateEngineKey } from '../../src/receipt/index.js';
import { openStore } from '../../src/store/index.js';
import { inProcess } from '../cli/in-process.js';
import { startServer } from '../server/helpers.js';
import { drive } from '../log/day.js';
import { removeTempDirs, tempDir } from '../store/helpers/tmp.js';

afterAll(() => removeTempDirs());

async function day(db: string, name: string): Promise<string> {
  const store = await openStore(db);
  try {
    const engine = createEngine({ store });
    const sid = await drive(engine, name, 2);
    const f = await engine.finalize(sid);
    if (!f.ok) throw new Error(f.message);
    return sid;
  } finally {
    await store.close();
  }
}

describe('log identity and shard rotation through the CLI', async () => {
  const dir = tempDir('log-identity');
  const run = (args: string[]) => inProcess(args, { cwd: dir, env: {} });
  const ek = join(dir, 'engine.key');
  await loadOrCreateEngineKey(ek, 'tally.example/desk');
  const db1 = join(dir, 'shard1.db');
  const db2 = join(dir, 'shard2.db');
  const lk1 = join(dir, 'log1.key');
  const lk2 = join(dir, 'log2.key');
  const root = join(dir, 'root.key');
  const id1 = join(dir, 'shard1.identity');
  const id2 = join(dir, 'shard2.identity');
  const exp = async (db: string, sid: string, out: string, lk: string) => {
    const r = await run(['export', '--db', db, '--session', sid, '--out', out, '--key', ek, '--log-key', lk, '--turn-receipts']);
    expect(r.code, r.stderr).toBe(0);
    return out;
  };
  const pinned = (out: string, ...ids: string[]) => ['--vkey', join(out, 'engine.vkey'), '--checkpoint', join(out, 'receipt.note'), ...ids.flatMap((f) => ['--log-identity', f])];
  const verify = (out: string, ...ids: string[]) => run(['verify', join(out, 'bundle.jsonl'), ...pinned(out, ...ids)]);

  it('shard 1: tally log identity writes a note signed by the root and log keys; a day verifies under it', async () => {
    await loadOrCreateEngineKey(lk1, 'tally.example/desk/log/2026h1');
    const a1 = await day(db1, 'a1');
    await exp(db1, a1, join(dir, 'a1'), lk1);
    const w = await run(['log', 'identity', '--out', id1, '--root-key', root, '--root-name', 'tally.example/desk/root', '--log-key', lk1, '--tiles', 'https://tally.example/desk/log/2026h1', '--not-before', '1', '--json']);
    expect(w.code, w.stderr).toBe(0);
    const note = readFileSync(id1, 'utf8');
    expect(note.split('\n')[0]).toBe('tally/v1/log-identity');
    expect(note).toMatch(/\n\n\u2014 tally\.example\/desk\/root [^\n]+\n\u2014 tally\.example\/desk\/log\/2026h1 [^\n]+\n$/);
    const v = await verify(join(dir, 'a1'), id1);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/engine log {3}leaf \d+ of tally\.example\/desk\/log\/2026h1/);
  });

  it('rotation: shard 2 succeeds shard 1 at its final checkpoint; old and new days verify, with one identity or the chain', async () => {
    const final = join(dir, 'tiles1');
    expect((await run(['tiles', 'export', final, '--db', db1, '--log-key', lk1])).code).toBe(0);
    await loadOrCreateEngineKey(lk2, 'tally.example/desk/log/2026h2');
    const w = await run(['log', 'identity', '--out', id2, '--root-key', root, '--log-key', lk2, '--tiles', 'https://tally.example/desk/log/2026h2', '--not-before', '1', '--succeeds', id1, '--final', join(final, 'checkpoint'), '--json']);
    expect(w.code, w.stderr).toBe(0);
    const size = Number(readFileSync(join(final, 'checkpoint'), 'utf8').split('\n')[1]);
    expect(JSON.parse(w.stdout).previous).toEqual([expect.objectContaining({ origin: 'tally.example/desk/log/2026h1', size })]);
    // New days go to the new shard (its own store).
    const b1 = await day(db2, 'b1');
    const outB = await exp(db2, b1, join(dir, 'b1'), lk2);
    const outA = join(dir, 'a1');
    for (const [out, ids] of [
      [outB, [id2]],
      [outA, [id2]],
      [outA, [id1, id2]],
      [outB, [id1, id2]],
      [outA, [id1]],
    ] as const) {
      const v = await verify(out, ...ids);
      expect(v.code, `${out} under ${ids.join(' ')}: ${v.stderr}`).toBe(0);
    }
    expect((await verify(outA, id2)).stdout).toContain('of tally.example/desk/log/2026h1');
    expect((await verify(outB, id2)).stdout).toContain('of tally.example/desk/log/2026h2');
    // A grader holding only shard 1's identity does not accept shard 2's days.
    const old = await verify(outB, id1);
    expect([old.code, old.stderr]).toEqual([1, expect.stringContaining('TALLY_LOG_IDENTITY_WRONG_LOG')]);
    // verify-proof, replay and grade verify take --log-identity the same way.
    const turn = readFileSync(join(outA, 'bundle.jsonl'), 'utf8').split('\n').findIndex((l) => l.includes('"kind":"turn"'));
    const vp = await run(['verify-proof', join(outA, 'turns', `${turn}.tlog-proof`), ...pinned(outA, id2)]);
    expect(vp.code, vp.stderr).toBe(0);
    const rp = await run(['replay', join(outB, 'bundle.jsonl'), ...pinned(outB, id1, id2), '--ruler', 'none']);
    expect(rp.code, rp.stderr).toBe(0);
    const gk = join(dir, 'grader.key');
    const grade = join(dir, 'grade.note');
    expect((await run(['grade', 'sign', join(outA, 'bundle.jsonl'), '--grade', '{"score":7}', '--key', gk, '--name', 'grader.example', '--out', grade])).code).toBe(0);
    const gv = (await run(['grade', 'key', '--key', gk])).stdout.trim();
    const g = await run(['grade', 'verify', grade, join(outA, 'bundle.jsonl'), '--vkey', gv, '--checkpoint', join(outA, 'receipt.note'), '--engine-key', join(outA, 'engine.vkey'), '--log-identity', id2]);
    expect(g.code, g.stderr).toBe(0);
  });

  it('a day shard 1 logged after its final checkpoint is refused under the successor', async () => {
    const late = await day(db1, 'a-late');
    const out = await exp(db1, late, join(dir, 'a-late'), lk1);
    expect((await verify(out, id1)).code).toBe(0);
    const v = await verify(out, id2);
    expect([v.code, v.stderr]).toEqual([1, expect.stringContaining('TALLY_LOG_IDENTITY_WRONG_LOG')]);
    expect(v.stderr).toContain("not within the shard's final checkpoint");
  });

  it('tally serve --log-identity publishes the identity at <prefix>/identity; one naming another log key is refused at start', async () => {
    const server = await startServer({ db: db2, args: ['--key', ek, '--log-key', lk2, '--log-identity', id2], dir });
    try {
      const r = await fetch(`${server.url}/log/identity`);
      expect([r.status, r.headers.get('content-type')]).toEqual([200, 'text/plain; charset=utf-8']);
      expect(await r.text()).toBe(readFileSync(id2, 'utf8'));
      expect((await fetch(`${server.url}/log/checkpoint`)).status).toBe(200);
    } finally {
      await server.stop();
    }
    const bare = await startServer({ db: db2, args: ['--key', ek, '--log-key', lk2], dir });
    try {
      expect((await fetch(`${bare.url}/log/identity`)).status).toBe(404);
    } finally {
      await bare.stop();
    }
    await expect(startServer({ db: db2, args: ['--key', ek, '--log-key', lk2, '--log-identity', id1], dir })).rejects.toThrow(/server exited with 2 before listening:[\s\S]*names the log key/);
  });

  it('refusals: expired, unsigned, edited, a successor under another root; usage errors', async () => {
    const outA = join(dir, 'a1');
    const expired = join(dir, 'expired.identity');
    expect((await run(['log', 'identity', '--out', expired, '--root-key', root, '--log-key', lk1, '--not-before', '1', '--not-after', '2'])).code).toBe(0);
    const e = await verify(outA, expired);
    expect([e.code, e.stderr]).toEqual([1, expect.stringContaining('TALLY_LOG_IDENTITY_EXPIRED')]);
    const note = readFileSync(id1, 'utf8');
    const unsigned = join(dir, 'unsigned.identity');
    // Only the root's signature: the log key's is missing.
    writeFileSync(unsigned, note.split('\n').filter((l) => !l.startsWith('\u2014 tally.example/desk/log/')).join('\n'));
    const u = await verify(outA, unsigned);
    expect([u.code, u.stderr]).toEqual([1, expect.stringContaining('TALLY_LOG_IDENTITY_UNSIGNED')]);
    const edited = join(dir, 'edited.identity');
    writeFileSync(edited, note.replace('"requests":12', '"requests":13'));
    expect((await verify(outA, edited)).stderr).toContain('TALLY_LOG_IDENTITY_UNSIGNED');
    writeFileSync(edited, note.replace('"requests":12', '"requests": 12'));
    expect((await verify(outA, edited)).stderr).toContain('TALLY_LOG_IDENTITY_INVALID');
    // A successor signed by another root: the chain is refused, though it verifies on its own.
    const other = join(dir, 'other-root.identity');
    const w = await run(['log', 'identity', '--out', other, '--root-key', join(dir, 'other-root.key'), '--root-name', 'mallory.example/root', '--log-key', lk2, '--not-before', '1']);
    expect(w.code, w.stderr).toBe(0);
    const c = await verify(join(dir, 'b1'), id1, other);
    expect([c.code, c.stderr]).toEqual([1, expect.stringContaining('TALLY_LOG_IDENTITY_CHAIN')]);
    const x = await run(['log', 'identity', '--out', join(dir, 'x'), '--root-key', join(dir, 'other-root.key'), '--log-key', lk2, '--succeeds', id1, '--final', join(dir, 'tiles1', 'checkpoint')]);
    expect([x.code, x.stderr]).toEqual([1, expect.stringContaining('a successor is signed by the same root')]);
    // --final must be the old shard's checkpoint, signed by its log key.
    const f = await run(['log', 'identity', '--out', join(dir, 'x'), '--root-key', root, '--log-key', lk2, '--succeeds', id1, '--final', join(outA, 'receipt.note')]);
    expect([f.code, f.stderr]).toEqual([1, expect.stringContaining('is not a checkpoint of tally.example/desk/log/2026h1')]);
    // Usage: an identity names the key and the policy.
    expect((await run(['verify', join(outA, 'bundle.jsonl'), ...pinned(outA, id1), '--log-key', join(outA, 'log.vkey')])).code).toBe(2);
    writeFileSync(join(dir, 'none.policy'), 'quorum none\n');
    const p = await run(['verify', join(outA, 'bundle.jsonl'), ...pinned(outA, id1), '--policy', join(dir, 'none.policy')]);
    expect([p.code, p.stderr]).toEqual([2, expect.stringContaining('--log-identity states the witness policy')]);
    expect((await run(['log', 'identity', '--out', join(dir, 'y'), '--root-key', root, '--log-key', lk2, '--final', join(dir, 'tiles1', 'checkpoint')])).code).toBe(2);
  });
});
