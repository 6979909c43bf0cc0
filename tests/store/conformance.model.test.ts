/**
 * One model-based conformance suite for every TranscriptStore (memory,
 * SQLite in a fresh temp file per run, PostgreSQL in one schema emptied per
 * run): random command
 * sequences run against the store and against a simple picture of it (how far
 * each recorded chain has been appended, which nonces are owned), and every
 * answer must match the picture. Entries are real: recorded from the engine.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/codec/index.js';
import { toHex } from '../../src/protocol/index.js';
import type { AppendOutcome, AppendRequest, NonceClaim, NonceOwner, TranscriptStore } from '../../src/store/index.js';
import { warnIfSkipped } from './helpers/pg.js';
import { entriesOf, headAt, recordChains, type RecordedChain } from './helpers/record.js';
import { STORE_KINDS, scratchKind, type StoreEnv } from './helpers/stores.js';
import { removeTempDirs } from './helpers/tmp.js';

warnIfSkipped('conformance.model.test.ts');

const enc = new TextEncoder();
const AGENTS = ['agent-a', 'agent-b'] as const;
const NONCES = ['1', '2', '3'] as const;
const POOL: NonceClaim[] = AGENTS.flatMap((agentId) => NONCES.map((nonce) => ({ agentId, nonce, intentHash: toHex(sha256(enc.encode(`${agentId}/${nonce}`))) })));

let chains: RecordedChain[] = [];
beforeAll(async () => {
  // Three real days of 4, 6 and 8 entries (genesis, frame/turn pairs, finalize).
  chains = await recordChains('conformance', [0, 1, 2], true);
});
afterAll(removeTempDirs);

interface Model {
  readonly durable: boolean;
  /** chain index → number of entries stored. */
  readonly sizes: Map<number, number>;
  readonly order: number[];
  readonly nonces: Map<string, NonceOwner>;
}
interface Real {
  env: StoreEnv;
}
type Cmd = fc.AsyncCommand<Model, Real>;

/** Outcomes seen, so the suite proves it reached every branch (a vacuous run fails). */
const seen = new Map<string, number>();
function saw(o: AppendOutcome): void {
  const k = o.ok ? 'ok' : o.reason;
  seen.set(k, (seen.get(k) ?? 0) + 1);
}

const key = (c: { agentId: string; nonce: string }): string => `${c.agentId}/${c.nonce}`;
const store = (r: Real): TranscriptStore => r.env.store;
const sizeOf = (m: Model, k: number): number | undefined => m.sizes.get(k);
const lengthOf = (k: number): number => chains[k]!.appends.length + 1;

function withNonces(req: AppendRequest, claims: readonly NonceClaim[]): AppendRequest {
  return { ...req, nonces: claims };
}

/** The outcome the model predicts when the head matches (or the session is absent/sealed). */
function gate(m: Model, k: number): AppendOutcome | undefined {
  const size = sizeOf(m, k);
  if (size === undefined) return { ok: false, reason: 'unknown-session' };
  if (size === lengthOf(k)) return { ok: false, reason: 'sealed' };
  return undefined;
}

class CreateSession implements Cmd {
  constructor(readonly k: number) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const c = chains[this.k]!;
    const got = await store(r).createSession(c.genesis, c.head0);
    expect(got).toBe(m.sizes.has(this.k) ? 'exists' : 'created');
    if (!m.sizes.has(this.k)) {
      m.sizes.set(this.k, 1);
      m.order.push(this.k);
    }
  }
  toString = (): string => `createSession(${this.k})`;
}

/** Append the chain's next entry on the current head, reserving `claims`. */
class AppendNext implements Cmd {
  constructor(readonly k: number, readonly claims: readonly number[]) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const c = chains[this.k]!;
    const claims = this.claims.map((i) => POOL[i]!);
    const size = sizeOf(m, this.k);
    const g = gate(m, this.k);
    let req: AppendRequest;
    if (size === undefined) req = withNonces(c.appends[0]!, claims);
    else if (size === lengthOf(this.k)) {
      // A well-formed request on the sealed head, carrying a real entry from another day (its finalize: placed anywhere after the genesis).
      const other = entriesOf(chains[(this.k + 1) % chains.length]!).at(-1)!;
      expect(other.kind).toBe('finalize');
      const entry = { ...other, index: size };
      req = { sessionId: c.sessionId, expected: { size, head: headAt(c, size).head }, entry, next: { ...headAt(c, size), size: size + 1, head: entry.hash }, nonces: claims };
    } else req = withNonces(c.appends[size - 1]!, claims);
    const got = await store(r).append(req);
    saw(got);
    if (g) return void expect(got).toEqual(g);
    const taken = claims.find((n) => m.nonces.has(key(n)));
    if (taken) {
      expect(got).toEqual({ ok: false, reason: 'nonce-taken', agentId: taken.agentId, nonce: taken.nonce, owner: m.nonces.get(key(taken)) });
      return;
    }
    expect(got).toEqual({ ok: true });
    m.sizes.set(this.k, size! + 1);
    for (const n of claims) m.nonces.set(key(n), { intentHash: n.intentHash, sessionId: c.sessionId, index: size! });
  }
  toString = (): string => `appendNext(${this.k}, nonces=[${this.claims.join(',')}])`;
}

/** Append on a head that is not the current one: must be head-moved (or sealed/unknown) and change nothing. */
class AppendStale implements Cmd {
  constructor(readonly k: number, readonly variant: 'behind' | 'ahead' | 'forged', readonly claims: readonly number[]) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const c = chains[this.k]!;
    const size = sizeOf(m, this.k) ?? 1;
    const claims = this.claims.map((i) => POOL[i]!);
    let req: AppendRequest;
    if (this.variant === 'behind' && size >= 2) req = withNonces(c.appends[size - 2]!, claims);
    else if (this.variant === 'ahead' && size < c.appends.length) req = withNonces(c.appends[size]!, claims);
    else {
      const base = c.appends[Math.min(size, c.appends.length) - 1]!;
      req = { ...base, expected: { size: base.expected.size, head: chains[(this.k + 1) % chains.length]!.genesis.hash }, nonces: claims };
    }
    const got = await store(r).append(req);
    saw(got);
    expect(got).toEqual(gate(m, this.k) ?? { ok: false, reason: 'head-moved' });
  }
  toString = (): string => `appendStale(${this.k}, ${this.variant}, nonces=[${this.claims.join(',')}])`;
}

class LoadHead implements Cmd {
  constructor(readonly k: number) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const size = sizeOf(m, this.k);
    const got = await store(r).loadHead(chains[this.k]!.sessionId);
    expect(got).toEqual(size === undefined ? undefined : headAt(chains[this.k]!, size));
  }
  toString = (): string => `loadHead(${this.k})`;
}

class ReadRange implements Cmd {
  constructor(readonly k: number, readonly from: number, readonly to: number) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const size = sizeOf(m, this.k) ?? 0;
    const want = entriesOf(chains[this.k]!).slice(0, size).slice(Math.max(0, this.from), Math.max(0, this.to));
    const got = await store(r).readRange(chains[this.k]!.sessionId, this.from, this.to);
    expect(got).toEqual(want);
    for (const e of got) expect(Object.getPrototypeOf(e.bytes)).toBe(Uint8Array.prototype);
  }
  toString = (): string => `readRange(${this.k}, ${this.from}, ${this.to})`;
}

class ReadSlot implements Cmd {
  constructor(readonly k: number, readonly kind: 'frame' | 'turn', readonly ordinal: number) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const size = sizeOf(m, this.k) ?? 0;
    const want = entriesOf(chains[this.k]!)
      .slice(0, size)
      .find((e) => e.kind === this.kind && e.ordinal === this.ordinal);
    expect(await store(r).readSlot(chains[this.k]!.sessionId, this.kind, this.ordinal)).toEqual(want);
  }
  toString = (): string => `readSlot(${this.k}, ${this.kind}, ${this.ordinal})`;
}

class OwnerOf implements Cmd {
  constructor(readonly i: number) {}
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    const n = POOL[this.i]!;
    expect(await store(r).nonceOwner(n.agentId, n.nonce)).toEqual(m.nonces.get(key(n)));
  }
  toString = (): string => `nonceOwner(${key(POOL[this.i]!)})`;
}

class ListSessions implements Cmd {
  check = (): boolean => true;
  async run(m: Model, r: Real): Promise<void> {
    expect(await store(r).listSessions()).toEqual(m.order.map((k) => chains[k]!.sessionId));
  }
  toString = (): string => 'listSessions()';
}

/** Close and open the same database: everything acknowledged must still be there. */
class Reopen implements Cmd {
  check = (m: Readonly<Model>): boolean => m.durable;
  async run(_m: Model, r: Real): Promise<void> {
    await r.env.reopen();
  }
  toString = (): string => 'reopen()';
}

const chainIdx = fc.nat({ max: 2 });
const claimIdxs = fc.uniqueArray(fc.nat({ max: POOL.length - 1 }), { maxLength: 2 });
const COMMANDS = [
  chainIdx.map((k) => new CreateSession(k)),
  fc.tuple(chainIdx, claimIdxs).map(([k, c]) => new AppendNext(k, c)),
  fc.tuple(chainIdx, claimIdxs).map(([k, c]) => new AppendNext(k, c)),
  fc.tuple(chainIdx, claimIdxs).map(([k, c]) => new AppendNext(k, c)),
  fc.tuple(chainIdx, fc.constantFrom('behind', 'ahead', 'forged' as const), claimIdxs).map(([k, v, c]) => new AppendStale(k, v, c)),
  chainIdx.map((k) => new LoadHead(k)),
  fc.tuple(chainIdx, fc.integer({ min: -1, max: 9 }), fc.integer({ min: -1, max: 10 })).map(([k, a, b]) => new ReadRange(k, a, b)),
  fc.tuple(chainIdx, fc.constantFrom('frame', 'turn' as const), fc.integer({ min: -2, max: 3 })).map(([k, kind, o]) => new ReadSlot(k, kind, o)),
  fc.nat({ max: POOL.length - 1 }).map((i) => new OwnerOf(i)),
  fc.constant(new ListSessions()),
  fc.constant(new Reopen()),
];

const RUNS = { memory: 300, sqlite: 60, postgres: 30, scratch: 100 } as const;
const SEED = 0x5707e;

for (const kind of [...STORE_KINDS, scratchKind]) {
  describe.skipIf(kind.skip)(`${kind.label} store conformance`, () => {
    it(`matches the model on random command sequences (seed 0x5707e, ${RUNS[kind.label]} runs)`, async () => {
      const env = await kind.fresh();
      try {
        await fc.assert(
          fc.asyncProperty(fc.commands(COMMANDS, { maxCommands: 60, size: 'max' }), async (cmds) => {
            await env.reset();
            await fc.asyncModelRun(() => ({ model: { durable: env.durable, sizes: new Map(), order: [], nonces: new Map() }, real: { env } }), cmds);
          }),
          { seed: SEED, numRuns: RUNS[kind.label] },
        );
      } finally {
        await env.dispose();
      }
      for (const outcome of ['ok', 'head-moved', 'nonce-taken', 'sealed', 'unknown-session']) expect(seen.get(outcome), outcome).toBeGreaterThan(5);
      seen.clear();
    });
  });
}
