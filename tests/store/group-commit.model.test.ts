/**
 * PostgreSQL group commit against a model (real server, TALLY_PG_URL): two
 * stores on one schema (two pools, as two `tally serve` processes would be),
 * each sending at most one statement at a time with up to 4 appends in it, so
 * waves of concurrent appends are batched — and batches of the two stores
 * contend for the same session rows and nonces. A wave mixes appends on the
 * current head (several per session), stale ones, nonce claims shared across
 * sessions, and bad ones the database refuses with an error (a nonce claim
 * holding NUL): a bad append fails its batch, and every other append of that
 * batch must still get its own answer. After each wave: at most one
 * winner per session and per nonce, every refusal justified by the state
 * before the wave or by a winner of the wave, every error a bad append, and
 * the stored heads, entries and nonce owners exactly the model's.
 */
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/codec/index.js';
import { TallyError, toHex } from '../../src/protocol/index.js';
import { PostgresStore, type AppendOutcome, type AppendRequest, type NonceClaim, type NonceOwner } from '../../src/store/index.js';
import { PG_URL, dropSchema, freshSchemaName, pgReady, pgTruncateAsOperator, warnIfSkipped } from './helpers/pg.js';
import { entriesOf, headAt, recordChains, type RecordedChain } from './helpers/record.js';

warnIfSkipped('group-commit.model.test.ts');

const SEED = 0x6c0aa;
const RUNS = Number(process.env['TALLY_GROUP_COMMIT_RUNS'] ?? 25);
const enc = new TextEncoder();
const POOL: NonceClaim[] = ['agent-a', 'agent-b'].flatMap((agentId) => ['1', '2', '3'].map((nonce) => ({ agentId, nonce, intentHash: toHex(sha256(enc.encode(`${agentId}/${nonce}`))) })));
const key = (c: { agentId: string; nonce: string }): string => `${c.agentId}/${c.nonce}`;

type Kind = 'next' | 'stale' | 'bad';
interface Op {
  readonly k: number;
  readonly kind: Kind;
  readonly claims: readonly number[];
  readonly via: 0 | 1;
}
interface Model {
  readonly sizes: number[];
  readonly nonces: Map<string, NonceOwner>;
}

let chains: RecordedChain[] = [];
let schema = '';
let stores: [PostgresStore, PostgresStore] | undefined;
const totals = { batches: 0, batchFailures: 0, ok: 0, headMoved: 0, nonceTaken: 0, errors: 0 };

describe.skipIf(!pgReady)('PostgreSQL group commit', () => {
  beforeAll(async () => {
    // Six real days of 6 to 10 entries, sealed at the end.
    chains = await recordChains('group-commit', [1, 2, 3, 1, 2, 3], true);
    schema = freshSchemaName('gc');
    const open = (): Promise<PostgresStore> => PostgresStore.open({ url: PG_URL!, schema, poolSize: 3, groupCommit: { maxBatch: 4, maxInFlight: 1 } });
    stores = [await open(), await open()];
  });
  afterAll(async () => {
    if (stores) for (const s of stores) await s.close();
    if (schema) await dropSchema(schema);
  });

  const lengthOf = (k: number): number => chains[k]!.appends.length + 1;

  /** The request `op` sends on the state before the wave, and whether the database must refuse it with an error. */
  function requestOf(m: Model, op: Op): { req: AppendRequest; bad: boolean } {
    const c = chains[op.k]!;
    const size = m.sizes[op.k]!;
    const nonces = op.claims.map((i) => POOL[i]!);
    if (op.kind === 'stale') {
      // One behind the head, or (on a fresh session) a head this session never had.
      if (size >= 2) return { req: { ...c.appends[size - 2]!, nonces }, bad: false };
      return { req: { ...c.appends[0]!, expected: { size: 1, head: chains[(op.k + 1) % chains.length]!.genesis.hash }, nonces }, bad: false };
    }
    if (size === lengthOf(op.k)) {
      // Sealed: a well-formed request on the sealed head.
      const entry = { ...entriesOf(chains[(op.k + 1) % chains.length]!).at(-1)!, index: size };
      return { req: { sessionId: c.sessionId, expected: { size, head: headAt(c, size).head }, entry, next: { ...headAt(c, size), size: size + 1, head: entry.hash }, nonces }, bad: false };
    }
    const next = c.appends[size - 1]!;
    if (op.kind === 'bad') {
      // A well-formed step whose nonce claim the database refuses with an error (PostgreSQL text cannot hold NUL).
      return { req: { ...next, nonces: [...nonces, { agentId: 'agent-\u0000', nonce: '1', intentHash: POOL[0]!.intentHash }] }, bad: true };
    }
    return { req: { ...next, nonces }, bad: false };
  }

  /** Checks one wave's answers against the state before it; returns the state after it. */
  function check(m: Model, ops: readonly Op[], sent: readonly { req: AppendRequest; bad: boolean }[], got: readonly PromiseSettledResult<AppendOutcome>[]): Model {
    const reqs = sent.map((x) => x.req);
    const winners = new Map<number, number>(); // chain → op index
    const owners = new Map(m.nonces);
    got.forEach((g, i) => {
      if (g.status !== 'fulfilled' || !g.value.ok) return;
      const op = ops[i]!;
      expect(op.kind === 'stale' || sent[i]!.bad || reqs[i]!.expected.size !== m.sizes[op.k], `op ${i} (${op.kind}) won`).toBe(false);
      expect(winners.has(op.k), `two winners in session ${op.k}`).toBe(false);
      winners.set(op.k, i);
      for (const n of reqs[i]!.nonces) {
        expect(owners.has(key(n)), `nonce ${key(n)} won twice`).toBe(false);
        owners.set(key(n), { intentHash: n.intentHash, sessionId: reqs[i]!.sessionId, index: m.sizes[op.k]! });
      }
    });
    got.forEach((g, i) => {
      const op = ops[i]!;
      const size = m.sizes[op.k]!;
      const sealed = size === lengthOf(op.k);
      const bad = sent[i]!.bad;
      if (g.status === 'rejected') {
        totals.errors++;
        expect(bad && !sealed, `op ${i} (${op.kind}) failed: ${String(g.reason)}`).toBe(true);
        expect(g.reason).toBeInstanceOf(TallyError);
        return;
      }
      const o = g.value;
      if (o.ok) return void totals.ok++;
      if (sealed) return void expect(o).toEqual({ ok: false, reason: 'sealed' });
      if (o.reason === 'head-moved') {
        totals.headMoved++;
        expect(op.kind === 'stale' || winners.has(op.k), `op ${i} saw head-moved with no winner in session ${op.k}`).toBe(true);
        return;
      }
      expect(o.reason).toBe('nonce-taken');
      if (o.reason !== 'nonce-taken') return;
      totals.nonceTaken++;
      expect(op.kind).not.toBe('stale');
      expect(reqs[i]!.nonces.map(key)).toContain(key(o));
      expect(o.owner).toEqual(owners.get(key(o)));
    });
    // Someone must win a session that an unclaimed, well-formed append on its current head asked for.
    ops.forEach((op, i) => {
      if (op.kind === 'next' && op.claims.length === 0 && m.sizes[op.k]! < lengthOf(op.k)) expect(winners.has(op.k), `session ${op.k} has no winner (op ${i})`).toBe(true);
    });
    return { sizes: m.sizes.map((s, k) => (winners.has(k) ? s + 1 : s)), nonces: owners };
  }

  async function expectStored(m: Model): Promise<void> {
    const s = stores![0];
    for (let k = 0; k < chains.length; k++) {
      expect(await s.loadHead(chains[k]!.sessionId)).toEqual(headAt(chains[k]!, m.sizes[k]!));
      expect(await s.readRange(chains[k]!.sessionId, 0, 100)).toEqual(entriesOf(chains[k]!).slice(0, m.sizes[k]!));
    }
    for (const n of POOL) expect(await s.nonceOwner(n.agentId, n.nonce)).toEqual(m.nonces.get(key(n)));
  }

  const opArb = fc.record({
    k: fc.nat({ max: 5 }),
    kind: fc.constantFrom<Kind>('next', 'next', 'next', 'stale', 'bad'),
    claims: fc.uniqueArray(fc.nat({ max: POOL.length - 1 }), { maxLength: 2 }).map((c) => (c.length > 0 && c[0]! % 2 === 0 ? c : [])),
    via: fc.constantFrom<0 | 1>(0, 1),
  });

  it(`answers every append of a batch on its own, exactly once across two stores (seed 0x6c0aa, ${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(opArb, { minLength: 1, maxLength: 10 }), { minLength: 1, maxLength: 8 }), async (waves) => {
        const t = pg.escapeIdentifier(schema);
        await pgTruncateAsOperator(`${t}.entries, ${t}.nonces, ${t}.sessions`);
        for (const c of chains) await stores![0].createSession(c.genesis, c.head0);
        let m: Model = { sizes: chains.map(() => 1), nonces: new Map() };
        for (const ops of waves) {
          const sent = ops.map((op) => requestOf(m, op));
          const before = stores!.map((s) => s.groupCommitStats);
          const got = await Promise.allSettled(sent.map((x, i) => stores![ops[i]!.via].append(x.req)));
          let failures = 0;
          stores!.forEach((s, i) => {
            totals.batches += s.groupCommitStats.batches - before[i]!.batches;
            failures += s.groupCommitStats.batchFailures - before[i]!.batchFailures;
          });
          totals.batchFailures += failures;
          // Only an append the database refuses with an error voids its batch: a stale one (its index taken) writes nothing and the batch goes on.
          expect(failures, 'batch failures in a wave').toBeLessThanOrEqual(sent.filter((x) => x.bad).length);
          m = check(m, ops, sent, got);
          await expectStored(m);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // The property reached every path: batches formed, some failed and were retried alone, and every answer occurred.
    expect(totals.batches, JSON.stringify(totals)).toBeGreaterThan(10);
    expect(totals.batchFailures, JSON.stringify(totals)).toBeGreaterThan(0);
    for (const n of ['ok', 'headMoved', 'nonceTaken', 'errors'] as const) expect(totals[n], JSON.stringify(totals)).toBeGreaterThan(0);
  });
});
