/**
 * Reliability of a witness process (built package, SQLite state):
 * - kill -9 between persisting and answering, restart, resubmit: the witness
 *   still holds exactly the root it persisted (no second root is cosigned at
 *   that size) and the submitter gets its cosignature on resubmission;
 * - four engines (logs) submitting to one witness process concurrently, each
 *   growing its own session while also racing on a shared one; every size the
 *   witness reports holding for an origin (each cosignature, each 409, and a
 *   stale first checkpoint replayed after every round) is recorded, and the
 *   sizes of each origin must never go down.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateEngineKey } from '../../src/receipt/index.js';
import { addSignatureLines, parseCosignerVerifierKey, submitCheckpoint, verifyCosignatures } from '../../src/witness/index.js';
import { TALLY, tally } from '../cli/helpers.js';
import { testLog, type TestLog } from './helpers.js';
import { startListening } from './serve.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-witness-rel-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CRASHER = resolve(import.meta.dirname, 'fixtures/crash-witness.mjs');

describe('witness reliability', () => {
  it('kill -9 after persist, before answer: restart and resubmit gives the cosignature, never a second root', async () => {
    const key = join(dir, 'crash.key');
    const db = join(dir, 'crash.db');
    const log = testLog();
    log.append(6);
    const crashing = await startListening([CRASHER, key, db, log.key.verifierKey]);
    const lost = await submitCheckpoint(crashing.url, log.body(0));
    expect(lost.kind).toBe('unreachable'); // the answer never left the process
    expect(await crashing.exited).toMatchObject({ signal: 'SIGKILL' });

    const vkey = tally(['witness', 'print-key', '--key', key]).stdout.trim();
    const verifier = parseCosignerVerifierKey(vkey);
    if (!verifier.ok) throw new Error(verifier.message);
    const w = await startListening([TALLY, 'witness', 'serve', '--key', key, '--db', db]);
    try {
      // The log retries from what it believed (0): the witness says it already holds 6.
      expect(await submitCheckpoint(w.url, log.body(0))).toEqual({ kind: 'conflict', size: 6 });
      // A fork at size 6 (another root, same key) is refused: the persisted root stands.
      // Same size, other root is 422 (C2SP tlog-witness since C2SP/C2SP#280), not a 409 conflict.
      const fork = testLog('tally.example/acme', 'ab'.repeat(32), log.key);
      fork.append(6, 'fork');
      expect(await submitCheckpoint(w.url, fork.body(6))).toMatchObject({ kind: 'refused', status: 422, message: expect.stringMatching(/^root-mismatch: /) });
      // Resubmitting the persisted checkpoint from 6 yields the lost cosignature.
      const again = await submitCheckpoint(w.url, log.body(6));
      expect(again.kind).toBe('cosigned');
      if (again.kind === 'cosigned') expect(verifyCosignatures(addSignatureLines(log.checkpoint(6), again.lines), [log.key], [verifier.verifier])).toMatchObject({ ok: true });
    } finally {
      w.child.kill('SIGTERM');
      await w.exited;
    }
  });

  it('four engines submit to one witness concurrently: every accepted size only grows, one winner per race', async () => {
    const key = join(dir, 'four.key');
    const db = join(dir, 'four.db');
    tally(['witness', 'keygen', '--name', 'witness.example/four', '--key', key]);
    const engines = [0, 1, 2, 3].map((i) => testLog(`engine${i}.example`, `${i}${i}`.repeat(32), generateEngineKey(`engine${i}.example`)));
    const w = await startListening([TALLY, 'witness', 'serve', '--key', key, '--db', db, ...engines.flatMap((e) => ['--log-key', e.key.verifierKey])]);
    /** Every size the witness said it holds for an origin, in the order it said so. */
    const seen = new Map<string, number[]>();
    const observe = (origin: string, size: number): void => {
      const sizes = seen.get(origin) ?? [];
      expect(size, `${origin} went ${[...sizes, size].join(' → ')}`).toBeGreaterThanOrEqual(sizes.at(-1) ?? 0);
      seen.set(origin, [...sizes, size]);
    };
    /** Replays `e`'s stale first checkpoint (old 0, size 1): the witness must refuse it with the size it holds. */
    const probe = async (e: TestLog): Promise<void> => {
      const r = await submitCheckpoint(w.url, e.body(0, 1));
      if (r.kind !== 'conflict' && r.kind !== 'cosigned') throw new Error(`probe of ${e.origin}: ${r.kind}`);
      observe(e.origin, r.kind === 'conflict' ? r.size : 1); // cosigned: the witness now holds size 1
      expect(r.kind).toBe('conflict');
    };
    try {
      await Promise.all(
        engines.map(async (e) => {
          let cosigned = 0;
          for (let round = 0; round < 5; round++) {
            e.append(1 + round);
            const r = await submitCheckpoint(w.url, e.body(cosigned));
            expect(r.kind).toBe('cosigned');
            cosigned = e.leaves.length;
            observe(e.origin, cosigned);
            await probe(e);
          }
          return cosigned;
        }),
      );
      // All four race on one session of engine0 from the same cosigned size: one wins.
      const shared = engines[0]!;
      const at = shared.leaves.length;
      shared.append(8);
      const race = await Promise.all(
        [at + 2, at + 4, at + 6, at + 8].map(async (s) => {
          const r = await submitCheckpoint(w.url, shared.body(at, s));
          if (r.kind === 'cosigned') observe(shared.origin, s);
          if (r.kind === 'conflict') observe(shared.origin, r.size);
          return r;
        }),
      );
      const winners = race.filter((r) => r.kind === 'cosigned');
      expect(winners).toHaveLength(1);
      const conflicts = race.filter((r) => r.kind === 'conflict');
      expect(conflicts).toHaveLength(3);
      expect(new Set(conflicts.map((c) => (c.kind === 'conflict' ? c.size : -1))).size).toBe(1);
      await Promise.all(engines.map(probe));
      // Over the whole run: every origin was observed after each round and at the end, and never went down.
      expect([...seen.keys()].sort()).toEqual(engines.map((e) => e.origin).sort());
      for (const [origin, sizes] of seen) {
        expect(sizes.length, origin).toBeGreaterThanOrEqual(11);
        expect(sizes, origin).toEqual([...sizes].sort((a, b) => a - b));
      }
      expect(seen.get(shared.origin)!.at(-1)).toBe(at + 2 * (race.findIndex((r) => r.kind === 'cosigned') + 1));
    } finally {
      w.child.kill('SIGTERM');
      await w.exited;
    }
  });
});
