/**
 * Crash safety: a child process appends to three days in a loop and prints a
 * line per acknowledged append; it is killed with SIGKILL at seeded random
 * moments, many times. After every kill: every acknowledged entry is there
 * with its hash, no partial entry exists, the chain re-derives, and the next
 * process resumes exactly where the last one stopped.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/session/index.js';
import { openStore } from '../../src/store/index.js';
import { PG_URL, dropSchema, freshSchemaName, pgExec, pgReady, warnIfSkipped } from './helpers/pg.js';
import { prng, requireFreshDist, startWorker } from './helpers/procs.js';
import { removeTempDirs, tempDir } from './helpers/tmp.js';

warnIfSkipped('crash.test.ts');
beforeAll(requireFreshDist);
afterAll(removeTempDirs);

const DAYS = 3;

/**
 * `settle` runs after each kill, before the parent looks: with a server
 * database an append the server had already received when its client died
 * still runs to completion (never acknowledged; it lands whole or not at
 * all), so the parent first waits until the dead client's sessions are gone.
 */
async function crashLoop(location: string, kills: number, seed: number, settle: () => Promise<void> = async () => {}): Promise<void> {
  const rand = prng(seed);
  const run = `${seed}-${process.pid}`;
  const acked = new Map<string, string>(); // "day:index" → entry hash
  const sids: string[] = [];
  let sizes: number[] = Array(DAYS).fill(0);
  for (let k = 0; k < kills; k++) {
    const w = startWorker('crash.mjs', { location, run, days: DAYS });
    await w.until((l) => l.filter((x) => x.startsWith('start ')).length === DAYS);
    // The new process resumes where the last one stopped.
    for (const line of w.lines.filter((x) => x.startsWith('start '))) {
      const [, di, sid, size] = line.split(' ') as [string, string, string, string];
      if (k === 0) {
        sids[Number(di)] = sid;
        continue;
      }
      expect(sid).toBe(sids[Number(di)]);
      expect(Number(size), `day ${di}`).toBe(sizes[Number(di)]);
    }
    const target = 1 + Math.floor(rand() * 30);
    await w.until((l) => l.filter((x) => x.startsWith('ack ')).length >= target);
    await sleep(rand() * 8);
    w.child.kill('SIGKILL');
    const exit = await w.exited;
    expect(exit.signal, exit.stderr).toBe('SIGKILL');
    await settle();
    for (const line of w.lines.filter((x) => x.startsWith('ack '))) {
      const [, di, index, hash] = line.split(' ') as [string, string, string, string];
      acked.set(`${di}:${index}`, hash);
    }
    // Reopen: every acknowledged entry is there; nothing past the head; the chain re-derives.
    const store = await openStore(location);
    try {
      const engine = createEngine({ store });
      sizes = [];
      for (let di = 0; di < DAYS; di++) {
        const sid = sids[di]!;
        const head = (await store.loadHead(sid))!;
        const rows = await store.readRange(sid, 0, head.size + 64);
        expect(rows.map((r) => r.index)).toEqual([...Array(head.size).keys()]);
        for (const [key, hash] of acked) {
          const [d, index] = key.split(':').map(Number) as [number, number];
          if (d === di) expect(rows[index]?.hash, `day ${di} entry ${index}`).toBe(hash);
        }
        const described = await engine.describe(sid);
        expect(described.ok).toBe(true);
        const v = await verifyBundle([encodeBundle(rows.map((r) => r.bytes))], { requireSealed: false });
        expect(v.ok && v.size).toBe(head.size);
        sizes.push(head.size);
      }
    } finally {
      await store.close();
    }
  }
  expect(acked.size).toBeGreaterThan(kills);
  // Finally seal every day and verify the exported chains.
  const store = await openStore(location);
  try {
    const engine = createEngine({ store });
    for (const sid of sids) {
      const d = await engine.describe(sid);
      if (d.ok && d.pending) {
        const p = d.pending;
        await engine.turn({ sessionId: sid, ordinal: p.ordinal, parentHash: p.entryHash, frameRoot: p.frameRoot, body: { kind: 'stand-down', failureClass: 'provider' } });
      }
      const fin = await engine.finalize(sid);
      expect(fin.ok).toBe(true);
      const lines: Uint8Array[] = [];
      for await (const l of engine.exportEntries(sid)) lines.push(l);
      const v = await verifyBundle([encodeBundle(lines)]);
      expect(v.ok && fin.ok && v.receiptRoot === fin.receipt.receiptRoot).toBe(true);
    }
  } finally {
    await store.close();
  }
}

describe('crash safety under SIGKILL', () => {
  it('SQLite (synchronous=FULL): 15 kills at seeded random moments lose no acknowledged entry and leave no partial one (seed 0xc4a54)', async () => {
    await crashLoop(join(tempDir('crash'), 'crash.db'), 15, 0xc4a54);
  });

  it.skipIf(!pgReady)('PostgreSQL: 8 kills at seeded random moments lose no acknowledged entry and leave no partial one (seed 0xc4a55)', async () => {
    const schema = freshSchemaName('crash');
    const u = new URL(PG_URL!);
    u.searchParams.set('schema', schema);
    u.searchParams.set('application_name', schema);
    const gone = async (): Promise<void> => {
      for (let i = 0; i < 500; i++) {
        const r = await pgExec('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [schema]);
        if (r.rows[0].n === 0) return;
        await sleep(10);
      }
      throw new Error('the killed client still has server sessions after 5 s');
    };
    try {
      await crashLoop(u.toString(), 8, 0xc4a55, gone);
    } finally {
      await dropSchema(schema);
    }
  });
});
