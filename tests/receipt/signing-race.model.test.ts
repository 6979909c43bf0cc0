/**
 * Two signers on one store (two `tally serve`, or a server and `tally
 * checkpoint`), with appends in between (issue #34). Each signer is a notary
 * with its own tree cache on its own store connection, as a second process
 * would be. The store holds ONE honest history, so every checkpoint either
 * asks for is consistent with everything the key signed: none may be
 * refused. The race was: a signer reads its tree at size n, the other signs
 * n+k meanwhile, and the first compared the record against its own tree,
 * "the store's tree has only n entries", refusing TALLY_SIGN_INCONSISTENT
 * (non-retryable) while the store held every entry. The notary now catches up
 * from the store and checks again.
 *
 * fc.scheduler gates the signers' store calls (head, latest record, record), so they interleave
 * between reading their tree, reading the latest record and recording; the
 * appends run concurrently. Every store kind (memory, SQLite, PostgreSQL with
 * two pools). The cross-process run is in tests/store/signing-log.process.test.ts.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { entryHash, toHex } from '../../src/protocol/index.js';
import { PackedMerkleTree, createNotary, generateEngineKey, receiptHasher } from '../../src/receipt/index.js';
import { PostgresStore, SqliteStore, type TranscriptStore } from '../../src/store/index.js';
import { sha256 } from '../../src/codec/index.js';
import { PG_URL, warnIfSkipped } from '../store/helpers/pg.js';
import { STORE_KINDS } from '../store/helpers/stores.js';
import { removeTempDirs } from '../store/helpers/tmp.js';

warnIfSkipped('signing-race.model.test.ts');
afterAll(removeTempDirs);

const key = generateEngineKey('race.example/desk');
const enc = new TextEncoder();
const RUNS = { memory: 120, sqlite: 80, postgres: 12 } as const;

async function secondConnection(store: TranscriptStore): Promise<TranscriptStore> {
  if (store instanceof SqliteStore) return new SqliteStore(store.path);
  if (store instanceof PostgresStore) return PostgresStore.open({ url: PG_URL!, schema: store.schema, poolSize: 4 });
  return store;
}

/** `store` with the calls a signature makes in turn (the head its tree syncs to, the latest record, the record) waiting for the scheduler. */
function gated(store: TranscriptStore, s: fc.Scheduler, tag: string): TranscriptStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      const f = v as (...a: unknown[]) => unknown;
      if (prop === 'loadHead' || prop === 'latestCheckpoint' || prop === 'recordCheckpoint') return (...a: unknown[]) => s.schedule(Promise.resolve(`${tag} ${String(prop)}`)).then(() => f.apply(target, a));
      return f.bind(target);
    },
  });
}

type Ask = { readonly signer: 0 | 1; readonly at: 'head' | number };

for (const kind of STORE_KINDS) {
  describe.skipIf(kind.skip)(`two signers on one ${kind.label} store, appends in between`, () => {
    it(`no consistent checkpoint request is refused; every record is a state of the store's one history (seed 0x3401)`, async () => {
      const env = await kind.fresh();
      const other = await secondConnection(env.store);
      let bothSigned = 0;
      try {
        await fc.assert(
          fc.asyncProperty(
            fc.scheduler(),
            fc.array(fc.record({ signer: fc.constantFrom<0 | 1>(0, 1), at: fc.oneof({ arbitrary: fc.constant<'head'>('head'), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: 14 }), weight: 1 }) }), { minLength: 2, maxLength: 8 }),
            fc.integer({ min: 1, max: 6 }),
            async (s, asks: Ask[], steps) => {
              const writer = createEngine({ store: env.store });
              const open = await writer.open({ name: `race ${kind.label} ${Math.random()}` });
              if (!open.ok) throw new Error(open.message);
              const sid = open.sessionId;
              let ord = -1;
              const step = async (): Promise<void> => {
                const f = await writer.frame({ sessionId: sid, ordinal: ord, time: 1_000 + (ord + 1) * 60_000 });
                if (!f.ok) throw new Error(f.message);
                const t = await writer.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`turn ${ord}`) } });
                if (!t.ok) throw new Error(t.message);
                ord++;
              };
              await step();
              // Two notaries, each with its own tree cache, on its own connection (another process would be both).
              const signers = [
                { notary: createNotary({ key }), engine: { store: gated(env.store, s, 'A'), finalize: writer.finalize.bind(writer) } },
                { notary: createNotary({ key }), engine: { store: gated(other, s, 'B'), finalize: writer.finalize.bind(writer) } },
              ];
              const appends = (async () => {
                for (let i = 0; i < steps; i++) await s.schedule(Promise.resolve(`append ${i}`)).then(step);
              })();
              const signs = asks.map(async ({ signer, at }) => {
                const { notary, engine } = signers[signer]!;
                const r = await notary.issueCheckpoint(engine, sid, at === 'head' ? undefined : at);
                // A size the store does not hold yet is a typed result of its own, not a signing refusal.
                return r.ok ? ({ ok: true, size: r.size, root: r.root } as const) : ({ ok: false, code: r.code } as const);
              });
              const out = await s.waitFor(Promise.all([appends, ...signs]));
              for (const r of out.slice(1) as Awaited<(typeof signs)[number]>[]) if (!r.ok) expect(r.code).toBe('size-out-of-range');
              // Every record is the root of the store's history at its size (one history, so pairwise consistent).
              const tree = new PackedMerkleTree(receiptHasher);
              for await (const line of writer.exportEntries(sid)) tree.append(entryHash(sha256, line));
              const recs = await env.store.signedCheckpoints(`${key.name}/${sid}`);
              for (const rec of recs) expect(rec.root, `size ${rec.size}`).toBe(toHex(tree.root(rec.size)));
              expect(recs.length).toBe(new Set(out.slice(1).flatMap((r) => ((r as { ok: boolean }).ok ? [(r as { size: number }).size] : []))).size);
              const by = (i: 0 | 1) => asks.some((a, j) => a.signer === i && (out[j + 1] as { ok: boolean }).ok);
              if (by(0) && by(1)) bothSigned++;
            },
          ),
          { seed: 0x3401, numRuns: RUNS[kind.label] },
        );
        // Not vacuous: most runs had both signers sign.
        expect(bothSigned).toBeGreaterThan(RUNS[kind.label] / 2);
      } finally {
        if (other !== env.store) await other.close();
        await env.dispose();
      }
    }, 120_000);
  });
}
