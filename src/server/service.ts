/**
 * The transport-free core of the wire: one call = (principal, method, params)
 * → a result or a typed refusal. The HTTP server and the MCP server are thin
 * envelopes around it, so both speak exactly the same vocabulary.
 *
 * Nothing here throws for bad input or refused access; an exception from the
 * engine or the store (I/O, corruption) becomes `internal` (or `unavailable`
 * for contention; the mapping is failures.ts), and the caller logs it.
 */
import { paymentIdConflictOf } from '../payments/index.js';
import { isDigestHex, isMember, toHex, SESSION_MESSAGE_KINDS, type SessionMessageKind, type SessionSpec } from '../protocol/index.js';
import { SessionTrees, type Notary } from '../receipt/index.js';
import type { Engine, Rejection } from '../session/index.js';
import type { StoreHealth } from '../store/index.js';
import type { Principal } from './auth.js';
import { roleMayCall, sessionAccess, turnAccess } from './access.js';
import { failureOfException, notaryFailure } from './failures.js';
import { authoredBytesOf, decodeParams } from './schemas.js';
import type { WireFailure } from './vocabulary.js';

/** What a call tells the log (never params, tokens or bytes). */
export interface CallMeta {
  readonly method: string;
  readonly session?: string;
  /** For turns: `admitted` or the intent ruling code, when a ruling was recorded. */
  readonly ruling?: string;
  readonly duplicate?: boolean;
  /** The exception behind an `internal`/`unavailable` failure. */
  readonly error?: unknown;
}

/** Outcome of {@link WireService.call}. */
export type CallOutcome =
  | { readonly ok: true; readonly result: Record<string, unknown>; readonly meta: CallMeta }
  | { readonly ok: false; readonly failure: WireFailure; readonly meta: CallMeta };

/** Outcome of a read used by the plain GET endpoints. */
export type ReadOutcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failure: WireFailure; readonly error?: unknown };

/** Options of {@link WireService}. */
export interface WireServiceOptions {
  /** How often a long-polling `session/events` looks at the store (ms, default 50). */
  readonly pollMs?: number;
  /** Aborted when the server shuts down: long polls return at once. */
  readonly shutdown?: AbortSignal;
  /**
   * Signs checkpoints with the engine key: `session/finalize` then also returns
   * the signed checkpoint over the sealed transcript, and the checkpoint,
   * turn-receipt and consistency reads are served. Without it they answer
   * `not-found`.
   */
  readonly notary?: Notary;
  /** Merkle trees for proofs (share the notary's; default a new cache). */
  readonly trees?: SessionTrees;
}

/** A signed checkpoint as the checkpoint read returns it. */
export interface CheckpointRead {
  readonly sessionId: string;
  readonly size: number;
  readonly root: string;
  /** The C2SP signed note (tlog-checkpoint text and the engine's signature line). */
  readonly signedCheckpoint: string;
}

/** An RFC 6962 inclusion proof of one entry, as `GET /sessions/:id/proof` returns it. */
export interface InclusionProofResult {
  readonly sessionId: string;
  readonly index: number;
  readonly size: number;
  /** The entry hash (RFC 6962 leaf hash of its canonical bytes). */
  readonly leafHash: string;
  /** RFC 6962 root over the first `size` entries. */
  readonly root: string;
  /** Sibling hashes, leaf upwards (hex). */
  readonly proof: readonly string[];
}

function fail(meta: CallMeta, failure: WireFailure): CallOutcome {
  return { ok: false, failure, meta };
}

function stripOk(r: { readonly ok: true }): Record<string, unknown> {
  const { ok: _ok, ...rest } = r as { ok: true } & Record<string, unknown>;
  return rest;
}

/** The wire verbs over an engine, with authorization. */
export class WireService {
  private readonly pollMs: number;
  private readonly shutdown: AbortSignal | undefined;
  private readonly notary: Notary | undefined;
  private readonly trees: SessionTrees;
  /** Sleeping long-polls, woken together by ONE listener on the shutdown signal (not one listener each). */
  private readonly sleepers = new Set<() => void>();

  constructor(
    /** The engine every call goes to. */
    readonly engine: Engine,
    options: WireServiceOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 50;
    this.shutdown = options.shutdown;
    this.notary = options.notary;
    this.trees = options.trees ?? new SessionTrees();
    this.shutdown?.addEventListener('abort', () => {
      for (const wake of [...this.sleepers]) wake();
    }, { once: true });
  }

  /** Waits `ms`, or less when the server shuts down. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.shutdown?.aborted) return resolve();
      const done = (): void => {
        clearTimeout(t);
        this.sleepers.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  /** The engine's verifier key (`name+keyid+base64`), when the server signs. */
  get verifierKey(): string | undefined {
    return this.notary?.verifierKey;
  }

  /**
   * Runs one verb for `principal`.
   *
   * @example
   * const out = await service.call(OPERATOR, 'session/open', { spec: { name: 'desk-1' } });
   * if (out.ok) console.log(out.result['sessionId']);
   */
  async call(principal: Principal, method: string, params: unknown): Promise<CallOutcome> {
    if (!isMember(SESSION_MESSAGE_KINDS, method)) return fail({ method: 'unknown' }, { type: 'method-not-found', message: `no method ${JSON.stringify(method.slice(0, 64))}; the methods are ${SESSION_MESSAGE_KINDS.join(', ')}` });
    if (typeof params !== 'object' || params === null || Array.isArray(params)) return fail({ method }, { type: 'invalid-params', message: 'params must be an object (by-name parameters)' });
    const sid = (params as Record<string, unknown>)['sessionId'];
    const meta: CallMeta = typeof sid === 'string' && isDigestHex(sid) ? { method, session: sid } : { method };
    const denied = roleMayCall(principal, method);
    if (denied) return fail(meta, denied);
    try {
      return await this.dispatch(principal, method, params, meta);
    } catch (e) {
      return fail({ ...meta, error: e }, failureOfException(e));
    }
  }

  private async dispatch(p: Principal, method: SessionMessageKind, params: object, meta: CallMeta): Promise<CallOutcome> {
    const done = (r: { readonly ok: true } | Rejection, extra: Partial<CallMeta> = {}): CallOutcome => {
      if (r.ok) return { ok: true, result: stripOk(r), meta: { ...meta, ...extra } };
      return fail(meta, { type: r.diagnostic, message: r.message });
    };
    switch (method) {
      case 'session/open': {
        const d = decodeParams(method, params);
        if (!d.ok) return fail(meta, d.failure);
        const r = await this.engine.open(d.value.spec);
        return done(r, r.ok ? { session: r.sessionId } : {});
      }
      case 'session/frame': {
        const d = decodeParams(method, params);
        if (!d.ok) return fail(meta, d.failure);
        const v = d.value;
        const r = await this.engine.frame({
          sessionId: v.sessionId,
          ordinal: v.ordinal,
          time: v.time,
          ...(v.data === undefined ? {} : { data: v.data }),
          ...(v.parentHash === undefined ? {} : { parentHash: v.parentHash }),
        });
        return done(r, r.ok ? { duplicate: r.duplicate } : {});
      }
      case 'session/turn': {
        const d = decodeParams(method, params);
        if (!d.ok) return fail(meta, d.failure);
        const v = d.value;
        const body = v.body.kind === 'authored' ? ({ kind: 'authored', bytes: authoredBytesOf(v.body), ...(v.body.hash === undefined ? {} : { hash: v.body.hash }) } as const) : ({ kind: 'stand-down', failureClass: v.body.failureClass } as const);
        if (p.role !== 'operator') {
          const spec = await this.engine.spec(v.sessionId);
          const denied = sessionAccess(p, v.sessionId, spec) ?? turnAccess(p, spec, body);
          if (denied) return fail(meta, denied);
        }
        const r = await this.engine.turn({
          sessionId: v.sessionId,
          ordinal: v.ordinal,
          parentHash: v.parentHash,
          frameRoot: v.frameRoot,
          body,
          ...(v.claimHash === undefined ? {} : { claimHash: v.claimHash }),
        });
        const conflict = r.ok ? paymentIdConflictOf(r.ruling) : undefined;
        if (r.ok && conflict) {
          // Recorded, and refused on the wire (x402 payment-identifier: 409); the same data on an identical retry (no `duplicate`).
          const data = { code: conflict.code, sessionId: r.sessionId, ordinal: r.ordinal, index: r.index, entryHash: r.entryHash, ruling: r.ruling };
          return fail({ ...meta, duplicate: r.duplicate, ruling: conflict.code }, { type: 'payment-id-conflict', message: conflict.message, data });
        }
        return done(r, r.ok ? { duplicate: r.duplicate, ...(r.ruling === undefined ? {} : { ruling: rulingLabel(r.ruling) }) } : {});
      }
      case 'session/events': {
        const d = decodeParams(method, params);
        if (!d.ok) return fail(meta, d.failure);
        const v = d.value;
        const denied = await this.readAccess(p, v.sessionId);
        if (denied) return fail(meta, denied);
        return done(await this.events(v.sessionId, v.after ?? -1, v.limit ?? 1000, v.wait ?? 0));
      }
      case 'session/describe': {
        const d = decodeParams(method, params);
        if (!d.ok) return fail(meta, d.failure);
        const denied = await this.readAccess(p, d.value.sessionId);
        if (denied) return fail(meta, denied);
        return done(await this.describeWithStore(d.value.sessionId));
      }
      case 'session/finalize': {
        const d = decodeParams(method, params);
        if (!d.ok) return fail(meta, d.failure);
        if (this.notary) {
          const r = await this.notary.sealWithReceipt(this.engine, d.value.sessionId, d.value.artifacts);
          if (!r.ok) return done(r);
          return done({ ok: true, receipt: r.receipt, duplicate: r.duplicate, signedCheckpoint: r.signedCheckpoint } as { ok: true }, { duplicate: r.duplicate });
        }
        const r = await this.engine.finalize(d.value.sessionId, d.value.artifacts);
        return done(r, r.ok ? { duplicate: r.duplicate } : {});
      }
    }
  }

  /** Read access to a session (agent tokens: own sessions only). */
  async readAccess(p: Principal, sessionId: string): Promise<WireFailure | undefined> {
    if (p.role !== 'agent') return undefined;
    let spec: SessionSpec | undefined;
    if (isDigestHex(sessionId)) spec = await this.engine.spec(sessionId);
    return sessionAccess(p, sessionId, spec);
  }

  /**
   * `describe` that is never stale: another process on the same database may
   * have appended since this engine cached the session, so the cached head is
   * compared with the store's and reloaded when they differ.
   */
  async freshDescribe(sessionId: string): ReturnType<Engine['describe']> {
    const r = await this.engine.describe(sessionId);
    if (!r.ok) return r;
    const head = await this.engine.store.loadHead(sessionId);
    if (head && (head.size !== r.size || head.head !== r.head)) {
      this.engine.evict(sessionId);
      return this.engine.describe(sessionId);
    }
    return r;
  }

  /** {@link freshDescribe} plus `store`: whether the store can commit right now (`store.health()`; a readiness probe reads the same). */
  async describeWithStore(sessionId: string): Promise<Awaited<ReturnType<Engine['describe']>> & { store?: StoreHealth }> {
    const r = await this.freshDescribe(sessionId);
    if (!r.ok) return r;
    const store: StoreHealth = (await this.engine.store.health?.()) ?? { ok: true };
    return { ...r, store };
  }

  private async events(sessionId: string, after: number, limit: number, wait: number): ReturnType<Engine['events']> {
    const first = await this.engine.events(sessionId, after, limit);
    if (!first.ok || wait === 0 || first.events.length > 0 || first.phase === 'sealed') return first;
    const deadline = performance.now() + wait;
    while (performance.now() < deadline && !this.shutdown?.aborted) {
      await this.sleep(Math.min(this.pollMs, Math.max(1, deadline - performance.now())));
      const head = await this.engine.store.loadHead(sessionId);
      if (head && (head.size > after + 1 || head.phase === 'sealed')) return this.engine.events(sessionId, after, limit);
    }
    return this.engine.events(sessionId, after, limit);
  }

  /**
   * The bundle for `GET /sessions/:id/bundle` (access checked, session known):
   * each entry's canonical bytes followed by `\n`, one chunk per entry.
   */
  async bundle(p: Principal, sessionId: string, range?: { readonly from: number; readonly limit: number }): Promise<ReadOutcome<AsyncGenerator<Uint8Array>>> {
    return this.read(p, sessionId, async () => {
      const head = await this.engine.store.loadHead(sessionId);
      if (!head) return { ok: false, failure: { type: 'wrong-session', message: `no session ${sessionId}` } };
      // `from` = size is the follower caught up (an empty answer); beyond it is a position the day does not have.
      if (range !== undefined && range.from > head.size) return { ok: false, failure: { type: 'malformed-query', message: `from=${range.from} is beyond the session's ${head.size} entries` } };
      const r = range === undefined ? {} : { from: range.from, to: Math.min(head.size, range.from + range.limit) };
      return { ok: true, value: bundleLines(this.engine.exportEntries(sessionId, 4096, r)) };
    });
  }

  /** `describe` for `GET /sessions/:id/describe`. */
  async describe(p: Principal, sessionId: string): Promise<ReadOutcome<Record<string, unknown>>> {
    return this.read(p, sessionId, async () => {
      const r = await this.describeWithStore(sessionId);
      if (!r.ok) return { ok: false, failure: { type: r.diagnostic, message: r.message } };
      return { ok: true, value: stripOk(r) };
    });
  }

  /** The sealed receipt for `GET /sessions/:id/receipt`; `not-found` before the seal. */
  async receipt(p: Principal, sessionId: string): Promise<ReadOutcome<Record<string, unknown>>> {
    return this.read(p, sessionId, async () => {
      const r = await this.freshDescribe(sessionId);
      if (!r.ok) return { ok: false, failure: { type: r.diagnostic, message: r.message } };
      if (!r.receipt) return { ok: false, failure: { type: 'not-found', message: 'the session is not sealed yet: no receipt' } };
      if (!this.notary) return { ok: true, value: { ...r.receipt } };
      const cp = await this.notary.issueCheckpoint(this.engine, sessionId, r.receipt.size);
      if (!cp.ok) return { ok: false, failure: notaryFailure(cp) };
      return { ok: true, value: { ...r.receipt, signedCheckpoint: cp.signedCheckpoint, verifierKey: this.notary.verifierKey } };
    });
  }

  /**
   * RFC 6962 inclusion proof of entry `index` in the tree of the first `size`
   * entries (default: all), from a tree whose leaf hashes are recomputed from
   * the stored bytes.
   */
  async proof(p: Principal, sessionId: string, index: number, size?: number): Promise<ReadOutcome<InclusionProofResult>> {
    return this.read(p, sessionId, async () => {
      const tree = await this.trees.sync(this.engine.store, sessionId);
      if (!tree) return { ok: false, failure: { type: 'wrong-session', message: `no session ${sessionId}` } };
      const n = size ?? tree.size;
      if (!Number.isSafeInteger(n) || n < 1 || n > tree.size) return { ok: false, failure: { type: 'not-found', message: `size must be from 1 to ${tree.size}` } };
      if (!Number.isSafeInteger(index) || index < 0 || index >= n) return { ok: false, failure: { type: 'not-found', message: `index must be from 0 to ${n - 1}` } };
      return {
        ok: true,
        value: { sessionId, index, size: n, leafHash: toHex(tree.leafHash(index)), root: toHex(tree.root(n)), proof: tree.inclusionProof(index, n).map(toHex) },
      };
    });
  }

  /** A checkpoint over the first `size` entries (default all), signed by the engine key. */
  async checkpoint(p: Principal, sessionId: string, size?: number): Promise<ReadOutcome<CheckpointRead>> {
    return this.signed(p, sessionId, async (notary) => {
      const cp = await notary.issueCheckpoint(this.engine, sessionId, size);
      if (!cp.ok) return { ok: false, failure: notaryFailure(cp) };
      return { ok: true, value: { sessionId, size: cp.size, root: cp.root, signedCheckpoint: cp.signedCheckpoint } };
    });
  }

  /** A single-turn receipt (C2SP tlog-proof text carrying the entry's bytes) for entry `index`. */
  async turnReceipt(p: Principal, sessionId: string, index: number, size?: number): Promise<ReadOutcome<string>> {
    return this.signed(p, sessionId, async (notary) => {
      const r = await notary.turnReceipt(this.engine, sessionId, index, size === undefined ? {} : { size });
      if (!r.ok) return { ok: false, failure: notaryFailure(r) };
      return { ok: true, value: r.text };
    });
  }

  /** A consistency proof from size `from` to `to` (default all), with a fresh signed checkpoint at `to` (text). */
  async consistency(p: Principal, sessionId: string, from: number, to?: number): Promise<ReadOutcome<string>> {
    return this.signed(p, sessionId, async (notary) => {
      const r = await notary.consistencyProofText(this.engine, sessionId, from, to);
      if (!r.ok) return { ok: false, failure: notaryFailure(r) };
      return { ok: true, value: r.text };
    });
  }

  private async signed<T>(p: Principal, sessionId: string, fn: (notary: Notary) => Promise<ReadOutcome<T>>): Promise<ReadOutcome<T>> {
    const notary = this.notary;
    if (!notary) return { ok: false, failure: { type: 'not-found', message: 'this server signs no checkpoints (start it with an engine key: tally serve --key <file>)' } };
    return this.read(p, sessionId, () => fn(notary));
  }

  private async read<T>(p: Principal, sessionId: string, fn: () => Promise<ReadOutcome<T>>): Promise<ReadOutcome<T>> {
    try {
      if (!isDigestHex(sessionId)) return { ok: false, failure: { type: 'malformed-entry', message: 'the session id must be 64 lowercase hex' } };
      const denied = await this.readAccess(p, sessionId);
      if (denied) return { ok: false, failure: denied };
      return await fn();
    } catch (e) {
      return { ok: false, failure: failureOfException(e), error: e };
    }
  }
}

async function* bundleLines(entries: AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> {
  for await (const e of entries) {
    const line = new Uint8Array(e.length + 1);
    line.set(e);
    line[e.length] = 0x0a;
    yield line;
  }
}

/** A short label of a ruling for logs: `admitted`, the intent code, or `ruled`. */
function rulingLabel(ruling: Record<string, unknown>): string {
  const intent = ruling['intent'];
  if (typeof intent === 'object' && intent !== null) {
    const i = intent as Record<string, unknown>;
    if (i['admitted'] === true) return 'admitted';
    if (typeof i['code'] === 'string') return i['code'];
  }
  return 'ruled';
}
