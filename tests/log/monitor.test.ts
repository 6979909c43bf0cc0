/**
 * `tally monitor --log` (PROTOCOL.md §15.7) reads the engine log's tiles —
 * from `tally tiles export` directories and from a real `tally serve
 * --log-key` — lists the sessions opened and sealed, and exits 1 on a fork
 * (a store copy grown another way, a smaller log, leaves that do not hash to
 * the held root) and on two checkpoint leaves giving one session checkpoint
 * two roots, naming both.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { engineLogLeafBytes } from '../../src/protocol/index.js';
import { createNotary, loadOrCreateEngineKey } from '../../src/receipt/index.js';
import { openStore } from '../../src/store/index.js';
import { removeTempDirs, tempDir } from '../store/helpers/tmp.js';
import { inProcess } from '../cli/in-process.js';
import { startServer } from '../server/helpers.js';
import { drive } from './day.js';
import { writeLogDir } from './log-dir.js';

afterAll(removeTempDirs);

describe('tally monitor --log', async () => {
  const dir = tempDir('log-monitor');
  const db = join(dir, 'tally.db');
  const copy = join(dir, 'copy.db');
  const lk = join(dir, 'log.key');
  const engineKey = await loadOrCreateEngineKey(join(dir, 'engine.key'), 'tally.example/desk');
  const logKey = await loadOrCreateEngineKey(lk, 'tally.example/desk/log');
  const run = (args: string[]) => inProcess(args, { cwd: dir, env: {} });
  const exportTo = async (database: string, out: string) => {
    const r = await run(['tiles', 'export', out, '--db', database, '--log-key', lk]);
    expect(r.code, r.stderr).toBe(0);
  };
  const day = async (database: string, name: string, seal: boolean) => {
    const store = await openStore(database);
    const engine = createEngine({ store });
    const sid = await drive(engine, name, 2);
    if (seal) {
      const s = await createNotary({ key: engineKey }).sealWithReceipt(engine, sid);
      if (!s.ok) throw new Error(s.message);
    }
    await store.close();
    return sid;
  };
  const a = await day(db, 'mon-a', false);
  const b = await day(db, 'mon-b', true);
  copyFileSync(db, copy);
  await exportTo(db, join(dir, 'v1'));
  const c = await day(db, 'mon-c', false);
  await exportTo(db, join(dir, 'v2'));
  await day(copy, 'mon-other', false);
  // A copy of the store is another database: the engine signs on it only after an operator acknowledges it (issue #34).
  // The fork a monitor must catch takes that explicit act: the operator runs the copy as if it were the store.
  const ack = await run(['operator', 'acknowledge-failover', '--db', copy, '--reason', 'a restored copy, run as the store', '--confirm']);
  expect(ack.code, ack.stderr + ack.stdout).toBe(0);
  await exportTo(copy, join(dir, 'fork'));
  await day(copy, 'mon-more', false);
  await exportTo(copy, join(dir, 'fork2'));
  const monitor = (where: string, extra: string[] = []) => run(['monitor', '--log', where, '--log-key', logKey.verifierKey, '--rounds', '1', '--interval', '0', ...extra]);

  it('lists every session opened, each signed checkpoint and seal, and those not sealed', async () => {
    const r = await monitor(join(dir, 'v2'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('round 1: consistent 0 -> 4 leaves');
    expect(r.stdout).toContain(`leaf 0: opened  ${a}`);
    expect(r.stdout).toMatch(new RegExp(`leaf 2: sealed  tally\\.example/desk/${b} \\(6 entries`));
    expect(r.stdout).toContain(`leaf 3: opened  ${c}`);
    expect(r.stdout).toContain('3 sessions opened, 2 not sealed');
    expect(r.stdout).toContain(`not sealed: ${a}`);
    // Holding the older checkpoint, the newer log extends it.
    expect((await monitor(join(dir, 'v2'), ['--checkpoint', join(dir, 'v1', 'checkpoint')])).code).toBe(0);
  });

  it('a fork exits 1 with both signed checkpoints: another root at the held size, a smaller log, leaves not the held root', async () => {
    const other = await monitor(join(dir, 'fork'), ['--checkpoint', join(dir, 'v2', 'checkpoint'), '--evidence', join(dir, 'evidence.json')]);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('FORK: other-root');
    expect(JSON.parse(readFileSync(join(dir, 'evidence.json'), 'utf8'))).toMatchObject({ kind: 'fork', held: readFileSync(join(dir, 'v2', 'checkpoint'), 'utf8'), served: readFileSync(join(dir, 'fork', 'checkpoint'), 'utf8') });
    const smaller = await monitor(join(dir, 'v1'), ['--checkpoint', join(dir, 'v2', 'checkpoint')]);
    expect([smaller.code, smaller.stderr]).toEqual([1, expect.stringContaining('FORK: smaller-size')]);
    const longer = await monitor(join(dir, 'fork2'), ['--checkpoint', join(dir, 'v2', 'checkpoint')]);
    expect([longer.code, longer.stderr]).toEqual([1, expect.stringContaining('FORK: leaves-not-root')]);
    // Not a fork: the copy's log extends v1, which both share.
    expect((await monitor(join(dir, 'fork2'), ['--checkpoint', join(dir, 'v1', 'checkpoint')])).code).toBe(0);
  });

  it('a flipped byte in an entry bundle, or another log key, is refused', async () => {
    const bad = join(dir, 'flipped');
    for (const f of ['checkpoint', 'tile/entries/000.p/4', 'tile/0/000.p/4']) {
      mkdirSync(dirname(join(bad, f)), { recursive: true });
      copyFileSync(join(dir, 'v2', f), join(bad, f));
    }
    const bundle = readFileSync(join(bad, 'tile/entries/000.p/4'));
    bundle[40] = bundle[40]! ^ 1;
    writeFileSync(join(bad, 'tile/entries/000.p/4'), bundle);
    const r = await monitor(bad);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("FORK: leaves-not-root");
    const wrongKey = await run(['monitor', '--log', join(dir, 'v2'), '--log-key', engineKey.verifierKey, '--rounds', '1']);
    expect([wrongKey.code, wrongKey.stderr]).toEqual([1, expect.stringContaining('not signed by the log key')]);
  });

  it('two checkpoint leaves giving one session checkpoint two roots: an equivocation naming both leaves', async () => {
    const sid = 'cd'.repeat(32);
    const origin = `tally.example/desk/${sid}`;
    const leaves = [
      engineLogLeafBytes({ kind: 'open', session: sid, spec: 'ef'.repeat(32) }),
      engineLogLeafBytes({ kind: 'checkpoint', origin, size: 3, root: '11'.repeat(32), seal: false }),
      engineLogLeafBytes({ kind: 'checkpoint', origin, size: 3, root: '22'.repeat(32), seal: false }),
    ];
    const out = join(dir, 'equivocal');
    writeLogDir(out, leaves, logKey);
    const r = await monitor(out);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`EQUIVOCATION: leaves 1 and 2 give ${origin} size 3 two roots`);
    expect(r.stderr).toContain('(TALLY_LOG_EQUIVOCATION)');
    expect(r.stdout).toContain(`leaf 1: {"kind":"checkpoint","origin":"${origin}","size":3,"root":"${'11'.repeat(32)}","seal":false}`);
  });

  it('follows a real tally serve --log-key over HTTP, without a token', async () => {
    const server = await startServer({ db, args: ['--log-key', lk, '--log-interval', '0'], dir });
    try {
      const r = await run(['monitor', '--log', `${server.url}/log`, '--log-key', logKey.verifierKey, '--rounds', '2', '--interval', '50', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines[0]).toMatchObject({ kind: 'consistent', round: 1, from: 0, size: 4 });
      expect(lines[1]).toMatchObject({ kind: 'consistent', round: 2, from: 4, size: 4, events: [] });
      expect(lines.at(-1)).toMatchObject({ ok: true, rounds: 2, size: 4, opened: 3 });
    } finally {
      await server.stop();
    }
  });
});
