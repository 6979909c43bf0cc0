/**
 * The verifier and the monitor read the engine log itself (PROTOCOL.md
 * §15.10) and apply one rule: two checkpoint leaves with one (origin, size)
 * and two roots, a leaf past its session's seal, or a leaf whose root is not
 * the session's own tree are refused with a typed code naming both leaves
 * (and both roots). `tally verify --log` reads an exported log and logs
 * written by hand with the real log key that add such a leaf; `tally monitor
 * --log --sessions` checks each checkpoint leaf against its session's bundle
 * (a directory, one tampered) and against a real `tally serve` on loopback.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { CheckpointLedger, checkpointAgainstTree, checkpointConflict, engineLogLeafBytes, type CheckpointLeaf } from '../../src/protocol/index.js';
import { createNotary, loadOrCreateEngineKey } from '../../src/receipt/index.js';
import { openStore } from '../../src/store/index.js';
import { removeTempDirs, tempDir } from '../store/helpers/tmp.js';
import { inProcess } from '../cli/in-process.js';
import { TOKENS, startServer } from '../server/helpers.js';
import { drive } from './day.js';
import { readLogDir, writeLogDir } from './log-dir.js';

afterAll(removeTempDirs);

const ORIGIN = `tally.example/desk/${'ab'.repeat(32)}`;
const leaf = (size: number, root: string, seal = false): CheckpointLeaf => ({ kind: 'checkpoint', origin: ORIGIN, size, root, seal });

describe('the one conflict rule (pure)', () => {
  it('one (origin, size) two roots; past the seal; not the session tree; the same checkpoint twice is none', () => {
    expect(checkpointConflict({ index: 1, leaf: leaf(3, '11'.repeat(32)) }, { index: 4, leaf: leaf(3, '22'.repeat(32)) })).toMatchObject({ code: 'TALLY_LOG_EQUIVOCATION', leaves: [1, 4], roots: ['11'.repeat(32), '22'.repeat(32)] });
    expect(checkpointConflict({ index: 1, leaf: leaf(3, '11'.repeat(32), true) }, { index: 4, leaf: leaf(5, '22'.repeat(32)) })).toMatchObject({ code: 'TALLY_LOG_INCONSISTENT', leaves: [1, 4] });
    expect(checkpointConflict({ index: 1, leaf: leaf(5, '22'.repeat(32)) }, { index: 4, leaf: leaf(3, '11'.repeat(32), true) })).toMatchObject({ code: 'TALLY_LOG_INCONSISTENT', leaves: [1, 4] });
    expect(checkpointConflict({ index: 1, leaf: leaf(3, '11'.repeat(32)) }, { index: 4, leaf: leaf(3, '11'.repeat(32), true) })).toBeUndefined();
    expect(checkpointConflict({ index: 1, leaf: leaf(3, '11'.repeat(32)) }, { index: 4, leaf: { ...leaf(3, '22'.repeat(32)), origin: 'other/x' } })).toBeUndefined();
    expect(checkpointAgainstTree({ index: 2, leaf: leaf(3, '11'.repeat(32)) }, () => '33'.repeat(32))).toMatchObject({ code: 'TALLY_LOG_SESSION_MISMATCH', leaves: [2], roots: ['11'.repeat(32), '33'.repeat(32)] });
    expect(checkpointAgainstTree({ index: 2, leaf: leaf(3, '11'.repeat(32)) }, () => undefined)).toBeUndefined();
  });

  it('the ledger finds a conflict exactly when some pair of leaves has one (property)', () => {
    const arb = fc.array(fc.record({ size: fc.integer({ min: 1, max: 4 }), root: fc.constantFrom('11', '22').map((r) => r.repeat(32)), seal: fc.boolean() }), { maxLength: 8 });
    fc.assert(
      fc.property(arb, (xs) => {
        const ledger = new CheckpointLedger();
        const all = xs.map((x, index) => ({ index, leaf: leaf(x.size, x.root, x.seal) }));
        const found = all.map((c) => ledger.add(c)).find((c) => c !== undefined);
        const firstBad = all.findIndex((c, j) => all.slice(0, j).some((p) => checkpointConflict(p, c) !== undefined));
        // The ledger stops at the first leaf that conflicts with an earlier one (it then holds no later leaf).
        expect(found?.leaves[1] ?? -1).toBe(firstBad);
      }),
      { verbose: true },
    );
  });
});

describe('tally verify --log and tally monitor --log --sessions', async () => {
  const dir = tempDir('log-equivocation');
  const db = join(dir, 'tally.db');
  const ek = join(dir, 'engine.key');
  const lk = join(dir, 'log.key');
  const engineKey = await loadOrCreateEngineKey(ek, 'tally.example/desk');
  const logKey = await loadOrCreateEngineKey(lk, 'tally.example/desk/log');
  const store = await openStore(db);
  const engine = createEngine({ store });
  const notary = createNotary({ key: engineKey });
  const a = await drive(engine, 'eq-a', 3);
  const b = await drive(engine, 'eq-b', 2);
  const early = await notary.issueCheckpoint(engine, a, 3);
  if (!early.ok) throw new Error(early.message);
  const seal = await notary.sealWithReceipt(engine, a);
  if (!seal.ok) throw new Error(seal.message);
  await store.close();
  const run = (args: string[], env: Record<string, string> = {}) => inProcess(args, { cwd: dir, env });
  const days = join(dir, 'days');
  const outA = join(days, a);
  expect((await run(['export', '--db', db, '--session', a, '--out', outA, '--key', ek, '--log-key', lk])).code).toBe(0);
  expect((await run(['export', '--db', db, '--session', b, '--out', join(days, b), '--key', ek, '--unsealed'])).code).toBe(0);
  const logDir = join(dir, 'log');
  expect((await run(['tiles', 'export', logDir, '--db', db, '--log-key', lk])).code).toBe(0);
  const leaves = readLogDir(logDir);
  const pinned = ['--vkey', join(outA, 'engine.vkey'), '--checkpoint', join(outA, 'receipt.note'), '--log-key', join(outA, 'log.vkey')];
  const verify = (log: string, json = false) => run(['verify', join(outA, 'bundle.jsonl'), ...pinned, '--log', log, ...(json ? ['--json'] : [])]);
  const sealLeaf = { kind: 'checkpoint' as const, origin: seal.checkpoint.origin, size: seal.checkpoint.size, root: seal.checkpoint.root, seal: true };
  const bound = JSON.parse((await run(['verify', join(outA, 'bundle.jsonl'), ...pinned, '--json'])).stdout).logBinding.index as number;
  /** The real log, one forged leaf appended, signed with the real log key (it extends the binding's log checkpoint). */
  const forged = (name: string, extra: CheckpointLeaf): string => {
    const out = join(dir, name);
    writeLogDir(out, [...leaves, engineLogLeafBytes(extra)], logKey);
    return out;
  };

  it('the real log: consistent with the binding, every other leaf of the day on its tree', async () => {
    const r = await verify(logDir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/engine log {3}read \d+ leaves: consistent with the binding; [1-9]\d* other checkpoint leaves of this day, each on the day's tree/);
    const j = JSON.parse((await verify(logDir, true)).stdout);
    expect(j.logRead.sameOrigin.length).toBeGreaterThan(0);
  });

  it('a leaf with the day’s size and another root: TALLY_LOG_EQUIVOCATION naming both leaves and both roots', async () => {
    const other = 'ee'.repeat(32);
    const r = await verify(forged('eq', { ...sealLeaf, root: other }), true);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`TALLY_LOG_EQUIVOCATION: leaves ${bound} and ${leaves.length} give ${sealLeaf.origin} size ${sealLeaf.size} two roots`);
    expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toMatchObject({ ok: false, code: 'TALLY_LOG_EQUIVOCATION', leaves: [bound, leaves.length], roots: [sealLeaf.root, other] });
  });

  it('a leaf past the seal: TALLY_LOG_INCONSISTENT; a leaf not on the day’s tree: TALLY_LOG_SESSION_MISMATCH, both leaves named', async () => {
    const past = await verify(forged('past', { ...sealLeaf, size: sealLeaf.size + 1, seal: false }));
    expect([past.code, past.stderr]).toEqual([1, expect.stringContaining(`TALLY_LOG_INCONSISTENT: leaf ${leaves.length} signs`)]);
    const off = await verify(forged('off', { ...sealLeaf, size: 2, root: 'cd'.repeat(32), seal: false }), true);
    expect(off.code).toBe(1);
    const j = JSON.parse(off.stdout.trim().split('\n').at(-1)!);
    expect(j).toMatchObject({ code: 'TALLY_LOG_SESSION_MISMATCH', leaves: [bound, leaves.length], roots: ['cd'.repeat(32), expect.stringMatching(/^[0-9a-f]{64}$/)] });
    expect(j.roots[1]).not.toBe('cd'.repeat(32));
  });

  it('a log that does not extend the binding’s checkpoint is a fork; an unreadable log is an I/O error; --log needs --log-key', async () => {
    const out = join(dir, 'fork');
    // A leaf put first: the tree at the binding's size is another one.
    writeLogDir(out, [engineLogLeafBytes({ kind: 'open', session: 'ff'.repeat(32), spec: 'ee'.repeat(32) }), ...leaves], logKey);
    const f = await verify(out);
    expect([f.code, f.stderr]).toEqual([1, expect.stringContaining('TALLY_LOG_FORK')]);
    const gone = await verify(join(dir, 'no-such-log'));
    expect([gone.code, gone.stderr]).toEqual([3, expect.stringContaining('TALLY_LOG_UNAVAILABLE')]);
    const usage = await run(['verify', join(outA, 'bundle.jsonl'), '--vkey', join(outA, 'engine.vkey'), '--checkpoint', join(outA, 'receipt.note'), '--log', logDir]);
    expect(usage.code).toBe(2);
  });

  /** `tally log identity` for the log key (root key of this test), its tiles at `tiles`. */
  const identity = async (name: string, tiles: string, key = lk): Promise<string> => {
    const out = join(dir, name);
    const w = await run(['log', 'identity', '--out', out, '--root-key', join(dir, 'root.key'), '--root-name', 'tally.example/desk/root', '--log-key', key, '--tiles', tiles, '--not-before', '1']);
    expect(w.code, w.stderr).toBe(0);
    return out;
  };
  const underIdentity = (id: string, log: string, json = false) =>
    run(['verify', join(outA, 'bundle.jsonl'), '--vkey', join(outA, 'engine.vkey'), '--checkpoint', join(outA, 'receipt.note'), '--log-identity', id, '--log', log, ...(json ? ['--json'] : [])]);

  it('verify --log with --log-identity: the log is read with the key the identity pins; its conflicts are named; a log under another key and a wrong identity are refused', async () => {
    const id = await identity('desk.identity', 'https://tally.example/desk/log');
    const r = await underIdentity(id, logDir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('consistent with the binding');
    const eq = await underIdentity(id, forged('eq-id', { ...sealLeaf, root: 'ee'.repeat(32) }), true);
    expect(eq.code).toBe(1);
    expect(JSON.parse(eq.stdout.trim().split('\n').at(-1)!)).toMatchObject({ ok: false, stage: 'log-read', code: 'TALLY_LOG_EQUIVOCATION', leaves: [bound, leaves.length] });
    // The same leaves, the checkpoint signed by another key under the log's name: not the pinned log.
    const otherLk = join(dir, 'other-log.key');
    const otherKey = await loadOrCreateEngineKey(otherLk, 'tally.example/desk/log');
    const under = join(dir, 'other-signed');
    writeLogDir(under, leaves, otherKey);
    const u = await underIdentity(id, under);
    expect([u.code, u.stderr]).toEqual([1, expect.stringContaining('TALLY_LOG_UNSIGNED')]);
    // An identity that pins that other key: the day's binding is refused before any log is read.
    const wrong = await underIdentity(await identity('wrong.identity', 'https://tally.example/desk/log', otherLk), logDir, true);
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stdout.trim().split('\n')[0]!)).toMatchObject({ ok: false, code: 'TALLY_LOG_UNSIGNED' });
    expect(wrong.stderr).toContain('invalid: log binding');
  });

  const monitor = (log: string, sessions: string, env: Record<string, string> = {}, json = false) => run(['monitor', '--log', log, '--log-key', logKey.verifierKey, '--sessions', sessions, '--rounds', '1', '--interval', '0', ...(json ? ['--json'] : [])], env);

  it('monitor --sessions <dir>: every checkpoint leaf matches its session’s bundle; a tampered bundle is TALLY_LOG_SESSION_MISMATCH', async () => {
    const r = await monitor(logDir, days);
    expect(r.code, r.stderr).toBe(0);
    const checkpoints = leaves.length - 2;
    expect(r.stdout).toContain(`sessions: ${checkpoints} checkpoints match their session's own tree, 0 unchecked`);
    // One byte of entry 1 of day A changed (its hash, so every tree above it): the leaves that cover it no longer match.
    const bad = join(dir, 'tampered');
    mkdirSync(bad, { recursive: true });
    const lines = readFileSync(join(outA, 'bundle.jsonl'), 'utf8').split('\n');
    lines[1] = lines[1]!.replace(/"ordinal":-1/, '"ordinal":-2');
    expect(lines[1]).toContain('"ordinal":-2');
    writeFileSync(join(bad, `${a}.jsonl`), lines.join('\n'));
    copyFileSync(join(days, b, 'bundle.jsonl'), join(bad, `${b}.jsonl`));
    const t = await monitor(logDir, bad, {}, true);
    expect(t.code).toBe(1);
    expect(t.stderr).toMatch(/SESSION MISMATCH: leaf \d+ gives .* but the session's own tree of that size has the root [0-9a-f]{64} \(TALLY_LOG_SESSION_MISMATCH\)/);
    expect(JSON.parse(t.stdout.trim().split('\n').at(-1)!)).toMatchObject({ ok: false, kind: 'session-mismatch', code: 'TALLY_LOG_SESSION_MISMATCH', leaf: { leaf: { origin: sealLeaf.origin } } });
    // A session whose bundle is not there is listed unchecked, never taken as evidence.
    const partial = join(dir, 'partial');
    mkdirSync(partial, { recursive: true });
    copyFileSync(join(days, b, 'bundle.jsonl'), join(partial, `${b}.jsonl`));
    const p = await monitor(logDir, partial);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/sessions: \d+ checkpoints match their session's own tree, [1-9]\d* unchecked/);
  });

  it('verify --log <url> and monitor --sessions <url>: a real tally serve on loopback; a log with a forged leaf for a served session is refused', async () => {
    const server = await startServer({ db, args: ['--key', ek, '--log-key', lk, '--log-interval', '0'], dir });
    try {
      // tally verify --log reads the served tiles as it reads a directory.
      const v = await verify(`${server.url}/log`);
      expect(v.code, v.stderr).toBe(0);
      expect(v.stdout).toContain('consistent with the binding');
      const ok = await monitor(`${server.url}/log`, server.url, { TALLY_TOKEN: TOKENS.auditor }, true);
      expect(ok.code, ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout.trim().split('\n').at(-1)!)).toMatchObject({ ok: true, sessions: { checked: leaves.length - 2, unchecked: [] } });
      const bad = await monitor(forged('served-forged', { ...sealLeaf, size: 2, root: '99'.repeat(32), seal: false }), server.url, { TALLY_TOKEN: TOKENS.auditor });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain(`SESSION MISMATCH: leaf ${leaves.length} gives ${sealLeaf.origin} size 2 the root ${'99'.repeat(32)}`);
      // Without the auditor token the sessions cannot be read: unchecked, not evidence.
      const anon = await monitor(`${server.url}/log`, server.url);
      expect(anon.code, anon.stderr).toBe(0);
      expect(anon.stdout).toMatch(/0 checkpoints match their session's own tree, [1-9]\d* unchecked/);
      // tiles:<url>: each session's own tlog-tiles (docs/PROTOCOL.md §15.4.1) instead of its bundle; the forged leaf is caught the same way.
      const tiles = await monitor(`${server.url}/log`, `tiles:${server.url}`, { TALLY_TOKEN: TOKENS.auditor }, true);
      expect(tiles.code, tiles.stderr).toBe(0);
      expect(JSON.parse(tiles.stdout.trim().split('\n').at(-1)!)).toMatchObject({ ok: true, sessions: { checked: leaves.length - 2, unchecked: [] } });
      const badTiles = await monitor(forged('tiles-forged', { ...sealLeaf, size: 2, root: '99'.repeat(32), seal: false }), `tiles:${server.url}`, { TALLY_TOKEN: TOKENS.auditor });
      expect(badTiles.code).toBe(1);
      expect(badTiles.stderr).toContain(`SESSION MISMATCH: leaf ${leaves.length} gives ${sealLeaf.origin} size 2 the root ${'99'.repeat(32)}`);
      // tiles:<dir>: one tally tiles export --session per session, under <dir>/<id>.
      const tdir = join(dir, 'session-tiles');
      for (const id of [a, b]) expect((await run(['tiles', 'export', join(tdir, id), '--session', id, '--db', db, '--key', ek])).code).toBe(0);
      const fromDir = await monitor(logDir, `tiles:${tdir}`, {}, true);
      expect(fromDir.code, fromDir.stderr).toBe(0);
      expect(JSON.parse(fromDir.stdout.trim().split('\n').at(-1)!)).toMatchObject({ ok: true, sessions: { checked: leaves.length - 2, unchecked: [] } });
      // monitor --log-identity: the identity's key, and its tiles URL when --log is not given; beside --log-key it is a usage error.
      const id = await identity('served.identity', `${server.url}/log`);
      const m = await run(['monitor', '--log-identity', id, '--rounds', '1', '--interval', '0', '--json']);
      expect(m.code, m.stderr).toBe(0);
      expect(JSON.parse(m.stdout.trim().split('\n').at(-1)!)).toMatchObject({ ok: true, size: leaves.length });
      const f = await run(['monitor', '--log-identity', id, '--log', forged('served-eq', { ...sealLeaf, root: 'ab'.repeat(32) }), '--rounds', '1', '--interval', '0']);
      expect([f.code, f.stderr]).toEqual([1, expect.stringContaining(`EQUIVOCATION: leaves ${bound} and ${leaves.length}`)]);
      const both = await run(['monitor', '--log-identity', id, '--log-key', logKey.verifierKey, '--rounds', '1']);
      expect(both.code).toBe(2);
      const noTiles = await run(['monitor', '--log-identity', await identity('other.identity', `${server.url}/log`, join(dir, 'other-log.key')), '--rounds', '1', '--interval', '0']);
      expect([noTiles.code, noTiles.stderr]).toEqual([1, expect.stringContaining('not signed by the log key')]);
      // GET /sessions/:id/log-proof: the day's binding as tally export writes it; tally verify takes it under the log key and under an identity.
      const auth = { authorization: `Bearer ${TOKENS.auditor}` };
      const served = await fetch(`${server.url}/sessions/${a}/log-proof?size=${sealLeaf.size}`, { headers: auth });
      expect(served.status, await served.clone().text()).toBe(200);
      const servedProof = join(dir, 'served.tlog-proof');
      writeFileSync(servedProof, await served.text());
      const withServed = await run(['verify', join(outA, 'bundle.jsonl'), ...pinned, '--log-proof', servedProof, '--json']);
      expect(withServed.code, withServed.stderr).toBe(0);
      expect(JSON.parse(withServed.stdout).logBinding).toMatchObject({ index: bound, seal: true });
      expect((await fetch(`${server.url}/sessions/${a}/log-proof?size=x`, { headers: auth })).status).toBe(422);
      // Another size: the server signs that checkpoint (logging it) and answers its own binding, a non-seal leaf after the day's.
      const one = await fetch(`${server.url}/sessions/${a}/log-proof?size=1`, { headers: auth });
      expect(one.status).toBe(200);
      expect(Number(/^index (\d+)$/m.exec(await one.text())![1])).toBeGreaterThan(bound);
    } finally {
      await server.stop();
    }
  });
});
