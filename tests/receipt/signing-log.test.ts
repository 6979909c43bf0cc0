/**
 * The signing log on every store (memory, SQLite, PostgreSQL):
 *
 * - a model test: random requests to sign checkpoints of two histories that
 *   share their first `fork` entries are answered exactly as a simple
 *   picture says — a new record, a duplicate, equivocation (another root at
 *   a recorded size) or inconsistency with ANY earlier record (the log only
 *   checks the latest; the model checks them all, which is the claim);
 * - races (fc.scheduler): concurrent signers of the two histories through
 *   separate store connections leave a log with one root per size whose
 *   records are pairwise consistent;
 * - the store contract: records survive a reopen, are immutable in the
 *   database, and malformed records are misuse.
 */
import fc from 'fast-check';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/codec/index.js';
import { toHex } from '../../src/protocol/index.js';
import { PackedMerkleTree, SigningLog, SigningRefusedError, receiptHasher, type SigningLogResult } from '../../src/receipt/index.js';
import { PostgresStore, SqliteStore, type SignedCheckpointRecord, type SigningLogStore, type TranscriptStore } from '../../src/store/index.js';
import { PG_URL, pgExec, warnIfSkipped } from '../store/helpers/pg.js';
import { STORE_KINDS, type StoreKind } from '../store/helpers/stores.js';
import { removeTempDirs } from '../store/helpers/tmp.js';
import pg from 'pg';

warnIfSkipped('signing-log.test.ts');
afterAll(removeTempDirs);

const N = 12;
const enc = new TextEncoder();
let counter = 0;

/** Two histories of N leaves that agree on the first `fork` leaves. */
function histories(fork: number, tag: string): { A: PackedMerkleTree; B: PackedMerkleTree } {
  const A = new PackedMerkleTree(receiptHasher);
  const B = new PackedMerkleTree(receiptHasher);
  for (let i = 0; i < N; i++) {
    A.append(sha256(enc.encode(`${tag} A ${i}`)));
    B.append(sha256(enc.encode(i < fork ? `${tag} A ${i}` : `${tag} B ${i}`)));
  }
  return { A, B };
}

type H = 'A' | 'B';
/** Which tree a (history, size) checkpoint is: the shared prefix ('C') or its own history's. */
const idOf = (h: H, size: number, fork: number): 'C' | H => (size <= fork ? 'C' : h);

/**
 * The rule in the picture: the store's tree (history h) must still BE every
 * checkpoint the key signed — its state at each recorded size must be the
 * recorded tree — or nothing is signed from it (inconsistent); at a
 * recorded size, the same tree is a duplicate and another is equivocation.
 * The log itself checks only the latest record; this checks them all.
 */
function expected(model: Map<number, 'C' | H>, h: H, size: number, fork: number): 'new' | 'duplicate' | 'TALLY_SIGN_EQUIVOCATION' | 'TALLY_SIGN_INCONSISTENT' {
  const latest = Math.max(0, ...model.keys());
  if (latest !== 0 && latest !== size) {
    for (const [s, rid] of model) if (idOf(h, s, fork) !== rid) return 'TALLY_SIGN_INCONSISTENT';
  }
  const at = model.get(size);
  if (at !== undefined) return at === idOf(h, size, fork) ? 'duplicate' : 'TALLY_SIGN_EQUIVOCATION';
  return 'new';
}

const outcome = (r: SigningLogResult): string => (r.ok ? (r.duplicate ? 'duplicate' : 'new') : r.code);

const RUNS = { memory: 60, sqlite: 30, postgres: 12 } as const;

/** A second connection to the same database (another process would open one). */
async function secondConnection(kind: StoreKind['label'], store: TranscriptStore): Promise<TranscriptStore> {
  if (store instanceof SqliteStore) return new SqliteStore(store.path);
  if (store instanceof PostgresStore) return PostgresStore.open({ url: PG_URL!, schema: store.schema, poolSize: 4 });
  expect(kind).toBe('memory');
  return store;
}

for (const kind of STORE_KINDS) {
  describe.skipIf(kind.skip)(`signing log on the ${kind.label} store`, () => {
    it(`answers every request as the model does: new, duplicate, equivocation, inconsistent with any earlier record (seed 0x5161)`, async () => {
      const env = await kind.fresh();
      const seen = new Set<string>();
      try {
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 0, max: N - 1 }),
            fc.array(fc.record({ h: fc.constantFrom<H>('A', 'B'), size: fc.integer({ min: 1, max: N }) }), { minLength: 1, maxLength: 14 }),
            async (fork, requests) => {
              const origin = `model.test/${kind.label}/${process.pid}/${counter++}`;
              const trees = histories(fork, origin);
              const log = new SigningLog(env.store, { now: () => 1_000 });
              const model = new Map<number, 'C' | H>();
              for (const { h, size } of requests) {
                const want = expected(model, h, size, fork);
                const r = await log.record({ origin, size, root: trees[h].root(size) }, trees[h]);
                expect(outcome(r), `${h}@${size} fork ${fork}`).toBe(want);
                seen.add(want);
                if (want === 'new') model.set(size, idOf(h, size, fork));
                if (!r.ok) expect(SigningLog.refusalError(r)).toBeInstanceOf(SigningRefusedError);
                const sizes = [...model.keys()].sort((a, b) => a - b);
                expect((await log.list(origin)).map((x) => x.size)).toEqual(sizes);
                expect((await log.latest(origin))?.size).toBe(sizes.at(-1));
              }
              for (const rec of await log.list(origin)) {
                const id = model.get(rec.size)!;
                expect(rec).toEqual({ origin, size: rec.size, root: toHex(trees[id === 'B' ? 'B' : 'A'].root(rec.size)), signedAt: 1_000 });
              }
            },
          ),
          { seed: 0x5161, numRuns: RUNS[kind.label] },
        );
        // The run reached every branch (a vacuous model test fails here).
        expect([...seen].sort()).toEqual(['TALLY_SIGN_EQUIVOCATION', 'TALLY_SIGN_INCONSISTENT', 'duplicate', 'new']);
      } finally {
        await env.dispose();
      }
    });

    it(`concurrent signers of two histories on two connections: one root per size, every record pairwise consistent (seed 0x5162)`, async () => {
      const env = await kind.fresh();
      const other = await secondConnection(kind.label, env.store);
      try {
        await fc.assert(
          fc.asyncProperty(
            fc.scheduler(),
            fc.integer({ min: 0, max: N - 2 }),
            fc.array(fc.record({ h: fc.constantFrom<H>('A', 'B'), size: fc.integer({ min: 1, max: N }), via: fc.boolean() }), { minLength: 2, maxLength: 8 }),
            async (s, fork, requests) => {
              const origin = `race.test/${kind.label}/${process.pid}/${counter++}`;
              const trees = histories(fork, origin);
              // Every store call waits for the scheduler, so signers interleave between reading the latest record and recording.
              const gated = (st: SigningLogStore, tag: string): SigningLogStore => ({
                latestCheckpoint: (o) => s.schedule(Promise.resolve(`${tag} latest`)).then(() => st.latestCheckpoint(o)),
                recordCheckpoint: (r, e) => s.schedule(Promise.resolve(`${tag} record ${r.size}`)).then(() => st.recordCheckpoint(r, e)),
                signedCheckpoints: (o) => st.signedCheckpoints(o),
              });
              const calls = requests.map(({ h, size, via }, i) =>
                new SigningLog(gated(via ? other : env.store, `#${i} ${h}@${size}`)).record({ origin, size, root: trees[h].root(size) }, trees[h]),
              );
              const logs = [new SigningLog(env.store)];
              const out = await s.waitFor(Promise.all(calls));
              const recs = await logs[0]!.list(origin);
              // Each size once, and every record is a state of ONE of the histories that all records share.
              expect(new Set(recs.map((r) => r.size)).size).toBe(recs.length);
              const beyondFork = recs.filter((r) => r.size > fork);
              const ids = new Set(beyondFork.map((r) => (r.root === toHex(trees.A.root(r.size)) ? 'A' : 'B')));
              expect(ids.size).toBeLessThanOrEqual(1);
              const ok = out.filter((r) => r.ok && !r.duplicate).length;
              expect(ok).toBe(recs.length);
            },
          ),
          { seed: 0x5162, numRuns: RUNS[kind.label] },
        );
      } finally {
        if (other !== env.store) await other.close();
        await env.dispose();
      }
    });

    it('records survive a reopen and the database refuses to change or delete them; a malformed record is misuse', async () => {
      const env = await kind.fresh();
      try {
        const origin = `durable.test/${counter++}`;
        const { A } = histories(0, origin);
        const rec = (size: number, at = 5): SignedCheckpointRecord => ({ origin, size, root: toHex(A.root(size)), signedAt: at });
        // A store that knows its position stamps the written row with it (SQLite migration 7, PostgreSQL 11).
        const first = await env.store.recordCheckpoint(rec(3), undefined);
        expect(first).toMatchObject({ ok: true, duplicate: false, record: rec(3) });
        if (env.store instanceof SqliteStore) expect(first.ok && first.record.position).toMatchObject({ system: expect.stringMatching(/^sqlite:[0-9a-f]{32}:\d+:\d+$/), timeline: 1, lsn: expect.stringMatching(/^[1-9][0-9]*$/) });
        if (env.store instanceof PostgresStore) expect(first.ok && first.record.position).toMatchObject({ system: expect.stringMatching(/^[0-9]+$/), timeline: expect.any(Number), lsn: expect.stringMatching(/^[0-9A-F]+\/[0-9A-F]+$/) });
        // Compare-and-record: a stale expectation writes nothing.
        expect(await env.store.recordCheckpoint(rec(5), undefined)).toEqual({ ok: false, reason: 'latest-moved', latest: rec(3) });
        expect(await env.store.recordCheckpoint(rec(5), { size: 3, root: rec(3).root })).toMatchObject({ ok: true, duplicate: false, record: rec(5) });
        // A duplicate answers the first record (its time), whatever the expectation.
        expect(await env.store.recordCheckpoint(rec(3, 9), undefined)).toEqual({ ok: true, duplicate: true, record: rec(3) });
        expect(await env.store.recordCheckpoint({ ...rec(3), root: 'ab'.repeat(32) }, { size: 5, root: rec(5).root })).toEqual({ ok: false, reason: 'equivocation', record: rec(3) });
        for (const bad of [{ ...rec(0) }, { ...rec(2), root: 'AB'.repeat(32) }, { ...rec(2), origin: '' }, { ...rec(2), origin: 'a\nb' }, { ...rec(2), signedAt: 1.5 }]) {
          await expect(env.store.recordCheckpoint(bad, { size: 5, root: rec(5).root })).rejects.toMatchObject({ code: 'TALLY_STORE_MISUSE' });
        }
        const again = await env.reopen();
        expect(await again.signedCheckpoints(origin)).toEqual([rec(3), rec(5)]);
        expect(await again.latestCheckpoint(origin)).toEqual(rec(5));
        if (again instanceof SqliteStore) {
          const raw = new Database(again.path);
          expect(() => raw.prepare('UPDATE signed_checkpoints SET root = ? WHERE size = 3').run('cd'.repeat(32))).toThrow(/append-only/);
          expect(() => raw.prepare('DELETE FROM signed_checkpoints').run()).toThrow(/append-only/);
          raw.close();
        }
        if (again instanceof PostgresStore) {
          const t = `${pg.escapeIdentifier(again.schema)}.signed_checkpoints`;
          await expect(pgExec(`UPDATE ${t} SET root = $1 WHERE size = 3`, ['cd'.repeat(32)])).rejects.toThrow(/immutable/);
          await expect(pgExec(`DELETE FROM ${t}`)).rejects.toThrow(/immutable/);
        }
      } finally {
        await env.dispose();
      }
    });
  });
}
