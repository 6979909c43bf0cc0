/**
 * The session controller: one method per wire verb. It is the only code that
 * advances a session, and only through a frame or a turn (there is no
 * `advance`). Each write runs under a per-session lock, is reconciled by the
 * pure protocol ladder, built on a COPY of the head and committed with one
 * compare-and-append; if another process moved the head first, the engine
 * reloads and reconciles again, so a race ends as a duplicate or a typed
 * diagnostic, never as a second write.
 */
import {
  engineLogLeafBytes,
  entryHash,
  isoTime,
  specHash,
  phaseAfter,
  phaseGate,
  reconcileFrame,
  reconcileTurn,
  toHex,
  PROTOCOL_VERSION,
  type CanonicalObject,
  type FinalizeEntry,
  type FrameEntry,
  type GenesisEntry,
  type SessionSpec,
  type TurnEntry,
} from '../protocol/index.js';
import { sha256 } from '../codec/sha256.js';
import { MemoryStore } from '../store/memory.js';
import type { AppendOutcome, NonceClaim, TranscriptStore } from '../store/types.js';
import { traceAppend, traceVerbs } from '../telemetry/index.js';
import { ContentionError, StoreCorruptionError } from './errors.js';
import { KeyedMutex } from './mutex.js';
import { computeClaimHash, frameEntryBytes, malformed, prepareArtifacts, prepareFrame, prepareSpec, prepareTurn, type PreparedTurn } from './prepare.js';
import { Border, loadState, type SessionState } from './state.js';
import { SessionCache } from './cache.js';
import { decode, reject, rulingRow, slotOf, stored, turnMessage, type Row } from './rows.js';
import type {
  DescribeResult,
  EventsResult,
  FinalizeResult,
  FrameResult,
  OpenResult,
  Rejection,
  SessionEvent,
  TurnOptions,
  TurnResult,
  TurnRuler,
} from './types.js';

/** Options of {@link createEngine}. */
export interface EngineOptions {
  /** Where transcripts live (default: a fresh {@link MemoryStore}). */
  readonly store?: TranscriptStore;
  /** Rules on authored turns (for example the intent contract). */
  readonly ruler?: TurnRuler;
  /**
   * Most sessions whose state is kept in memory (default 4096); the least
   * recently used are dropped and re-derived from the store on their next call,
   * so a long-running server's memory stays bounded however many days it serves.
   */
  readonly maxCachedSessions?: number;
}

const MAX_ATTEMPTS = 64;
const EVENTS_MAX = 10_000;

/** The session controller; create one with {@link createEngine}. */
export class Engine {
  /** The store this engine writes to. */
  readonly store: TranscriptStore;
  private readonly ruler: TurnRuler | undefined;
  private readonly lock = new KeyedMutex();
  private readonly cache: SessionCache;

  constructor(options: EngineOptions = {}) {
    this.store = options.store ?? new MemoryStore();
    this.ruler = options.ruler;
    const max = options.maxCachedSessions ?? 4096;
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`maxCachedSessions must be a positive integer, got ${String(max)}`);
    this.cache = new SessionCache(max);
  }

  /** `session/open`: seals `spec` in a genesis; the same spec always yields the same session id. */
  async open(spec: unknown): Promise<OpenResult> {
    const p = prepareSpec(spec);
    if (!p.ok) return p;
    const problem = this.ruler?.checkSpec?.(p.spec);
    if (problem) return malformed(problem);
    const genesis: GenesisEntry = { kind: 'genesis', protocol: PROTOCOL_VERSION, spec: p.spec };
    const { s: g, leaf } = stored(0, genesis);
    const frontier = Border.EMPTY.append(leaf);
    // The engine log's open leaf goes in with the session (a store that keeps no engine log ignores it).
    const logLeaf = engineLogLeafBytes({ kind: 'open', session: g.hash, spec: specHash(sha256, p.spec) });
    const created = await this.store.createSession(
      g,
      {
        sessionId: g.hash,
        size: 1,
        head: g.hash,
        frontier: frontier.hex,
        phase: 'awaiting-frame',
      },
      logLeaf,
    );
    return { ok: true, sessionId: g.hash, created: created === 'created' };
  }

  /** `session/frame`: the runtime delivers the OPEN frame (ordinal -1) or the next wake. */
  async frame(input: unknown): Promise<FrameResult> {
    const p = prepareFrame(input);
    if (!p.ok) return p;
    const f = p.frame;
    return this.withSession(f.sessionId, async (st) => {
      const rec = f.ordinal < st.nextOrdinal || st.pending?.ordinal === f.ordinal ? await this.store.readSlot(st.sessionId, 'frame', f.ordinal) : undefined;
      if (rec) {
        const e = decode(rec, st.sessionId) as FrameEntry;
        const r = reconcileFrame(
          { state: 'recorded', sessionId: st.sessionId, ordinal: e.ordinal, parentHash: e.parent, frameRoot: e.frameRoot, entryHash: rec.hash },
          { sessionId: f.sessionId, ordinal: f.ordinal, frameRoot: f.frameRoot, ...(f.parentHash === undefined ? {} : { parentHash: f.parentHash }) },
        );
        if (r.ok && r.duplicate) {
          return { ok: true, sessionId: st.sessionId, ordinal: f.ordinal, index: rec.index, entryHash: rec.hash, frameRoot: e.frameRoot, duplicate: true };
        }
        if (st.phase === 'sealed') return reject('sealed', 'the session is sealed');
        if (!r.ok) return reject(r.diagnostic, r.diagnostic === 'turn-conflict' ? `frame ${f.ordinal} is already recorded with other content` : `frame does not match slot ${f.ordinal}`);
      }
      const gate = phaseGate(st.phase, 'frame');
      if (gate) return reject(gate, gate === 'sealed' ? 'the session is sealed' : `frame ${st.pending?.ordinal} has not been answered yet`);
      const r = reconcileFrame(
        { state: 'open', sessionId: st.sessionId, ordinal: st.nextOrdinal, parentHash: st.head },
        { sessionId: f.sessionId, ordinal: f.ordinal, frameRoot: f.frameRoot, ...(f.parentHash === undefined ? {} : { parentHash: f.parentHash }) },
      );
      if (!r.ok) return reject(r.diagnostic, `the next frame must have ordinal ${st.nextOrdinal} and parent ${st.head}`);
      if (st.lastFrameTime !== undefined && f.time < st.lastFrameTime) return malformed(`frame time ${isoTime(f.time)} is before the previous frame's ${isoTime(st.lastFrameTime)}`);
      const entry: FrameEntry = {
        kind: 'frame',
        session: st.sessionId,
        ordinal: f.ordinal,
        parent: st.head,
        time: f.time,
        frameRoot: f.frameRoot,
        ...(f.data === undefined ? {} : { data: f.data }),
      };
      const row = stored(st.size, entry, frameEntryBytes(entry, f));
      const s = row.s;
      const committed = await this.commit(st, row, [], (frontier) => ({
        ...st,
        size: st.size + 1,
        head: s.hash,
        frontier,
        phase: 'pending',
        pending: f.data === undefined ? { ordinal: f.ordinal, frameRoot: f.frameRoot, entryHash: s.hash, time: f.time } : { ordinal: f.ordinal, frameRoot: f.frameRoot, entryHash: s.hash, time: f.time, data: f.data },
        lastFrameTime: f.time,
        counts: { ...st.counts, frames: st.counts.frames + 1 },
      }));
      if (committed !== true) return committed;
      return { ok: true, sessionId: st.sessionId, ordinal: f.ordinal, index: s.index, entryHash: s.hash, frameRoot: f.frameRoot, duplicate: false };
    });
  }

  /** `session/turn`: the one answer to the pending frame; an identical retry returns the settled hash forever. */
  async turn(input: unknown, options: TurnOptions = {}): Promise<TurnResult> {
    const p = prepareTurn(input);
    if (!p.ok) return p;
    const t = p.turn;
    // A declared-hash mismatch is malformed whatever the slot: check it first.
    // (Without declared hashes this check cannot fail: the engine computed them.)
    if (t.claim.declared !== undefined) {
      const pre = reconcileTurn({ state: 'open', ...slotOf(t) }, t.claim);
      if (!pre.ok && pre.diagnostic === 'malformed-entry') return reject('malformed-entry', 'a declared hash does not match the hash recomputed from the bytes');
    }
    return this.withSession(t.claim.sessionId, async (st) => {
      const slotOpen = st.pending?.ordinal === t.claim.ordinal;
      const rec = slotOpen ? undefined : await this.store.readSlot(st.sessionId, 'turn', t.claim.ordinal);
      if (rec) {
        const e = decode(rec, st.sessionId) as TurnEntry;
        const r = reconcileTurn(
          { state: 'recorded', sessionId: e.session, ordinal: e.ordinal, parentHash: e.parent, frameRoot: e.frameRoot, claimHash: computeClaimHash(e), entryHash: rec.hash },
          t.claim,
        );
        if (r.ok) {
          return {
            ok: true,
            sessionId: st.sessionId,
            ordinal: e.ordinal,
            index: rec.index,
            entryHash: rec.hash,
            duplicate: true,
            ...(e.ruling === undefined ? {} : { ruling: e.ruling }),
          };
        }
        if (st.phase === 'sealed') return reject('sealed', 'the session is sealed; only identical retries are answered');
        return reject(r.diagnostic, turnMessage(r.diagnostic, t.claim.ordinal));
      }
      const gate = phaseGate(st.phase, 'turn');
      if (gate) return reject(gate, gate === 'sealed' ? 'the session is sealed' : `no frame is pending (the next frame will be ${st.nextOrdinal})`);
      const pending = st.pending!;
      const r = reconcileTurn({ state: 'open', sessionId: st.sessionId, ordinal: pending.ordinal, parentHash: pending.entryHash, frameRoot: pending.frameRoot }, t.claim);
      if (!r.ok) return reject(r.diagnostic, turnMessage(r.diagnostic, pending.ordinal));
      return this.admitTurn(st, t, options);
    });
  }

  private async admitTurn(st: SessionState, t: PreparedTurn, options: TurnOptions): Promise<TurnResult> {
    const pending = st.pending!;
    let ruling: CanonicalObject | undefined;
    let nonces: readonly NonceClaim[] = [];
    if (this.ruler && (t.authored || this.ruler.ruleStandDown)) {
      const context = {
        sessionId: st.sessionId,
        spec: st.spec,
        ordinal: pending.ordinal,
        frameTime: pending.time,
        ...(pending.data === undefined ? {} : { frameData: pending.data }),
        nonceOwner: (agentId: string, nonce: string) => this.store.nonceOwner(agentId, nonce),
        ...(options.recordedRuling === undefined ? {} : { recorded: options.recordedRuling }),
        ...(options.recordedRuling === undefined && this.store.reserve !== undefined ? { reserve: (claims: readonly NonceClaim[]) => this.reserveFor(st, claims) } : {}),
      };
      const outcome = t.authored ? await this.ruler.rule({ ...context, authored: t.authored }) : await this.ruler.ruleStandDown!(context);
      if (outcome) {
        ruling = outcome.ruling;
        nonces = outcome.nonces;
      }
    }
    // Without a ruling the entry is exactly the claim, whose bytes are already encoded.
    const row = ruling === undefined ? stored(st.size, t.entry, t.claimBytes) : rulingRow(st.size, { ...t.entry, ruling });
    const s = row.s;
    const standDown = t.entry.body.kind === 'stand-down';
    const committed = await this.commit(st, row, nonces, (frontier) => ({
      ...st,
      size: st.size + 1,
      head: s.hash,
      frontier,
      phase: 'awaiting-frame',
      nextOrdinal: pending.ordinal + 1,
      pending: undefined,
      counts: {
        ...st.counts,
        turns: st.counts.turns + 1,
        authored: st.counts.authored + (standDown ? 0 : 1),
        standDowns: st.counts.standDowns + (standDown ? 1 : 0),
      },
    }), t.authored);
    if (committed !== true) return committed;
    return { ok: true, sessionId: st.sessionId, ordinal: pending.ordinal, index: s.index, entryHash: s.hash, duplicate: false, ...(ruling === undefined ? {} : { ruling }) };
  }

  /** Reserves `claims` for the turn at `st.size` ahead of its append; a claim already held reconciles the verb again on fresh state. */
  private async reserveFor(st: SessionState, claims: readonly NonceClaim[]): Promise<void> {
    if (claims.length === 0) return;
    const r = await this.store.reserve!(st.sessionId, st.size, claims);
    if (!r.ok) throw new Retry();
  }

  /** `session/finalize`: seals the chain and returns the receipt; the same artifacts again return the same receipt. */
  async finalize(sessionId: unknown, artifacts?: unknown): Promise<FinalizeResult> {
    if (typeof sessionId !== 'string') return malformed('sessionId must be a string');
    const a = prepareArtifacts(artifacts);
    if (!a.ok) return a;
    return this.withSession(sessionId, async (st) => {
      if (st.seal) {
        if (st.seal.artifactsText === a.text) return { ok: true, receipt: st.seal.receipt, duplicate: true };
        return reject('sealed', 'the session is already sealed with other artifacts');
      }
      const gate = phaseGate(st.phase, 'finalize');
      if (gate) return reject(gate, `frame ${st.pending?.ordinal} has not been answered yet; stand it down first`);
      const entry: FinalizeEntry = {
        kind: 'finalize',
        session: st.sessionId,
        parent: st.head,
        size: st.size,
        root: toHex(st.frontier.root()),
        ...(a.artifacts === undefined ? {} : { artifacts: a.artifacts }),
      };
      const row = stored(st.size, entry);
      const s = row.s;
      let receipt: FinalizeResult | undefined;
      const committed = await this.commit(st, row, [], (frontier) => {
        const r = { sessionId: st.sessionId, size: st.size + 1, receiptRoot: toHex(frontier.root()), head: s.hash };
        receipt = { ok: true, receipt: r, duplicate: false };
        return { ...st, size: st.size + 1, head: s.hash, frontier, phase: 'sealed', seal: { receipt: r, artifactsText: a.text } };
      });
      if (committed !== true) return committed;
      return receipt!;
    });
  }

  /** `session/events`: entries after the cursor `after` (an entry index; -1 for all). */
  async events(sessionId: unknown, after = -1, limit = 1000): Promise<EventsResult> {
    if (typeof sessionId !== 'string') return malformed('sessionId must be a string');
    if (!Number.isSafeInteger(after) || after < -1) return malformed('after must be an integer >= -1');
    if (!Number.isSafeInteger(limit) || limit < 1) return malformed('limit must be a positive integer');
    const head = await this.store.loadHead(sessionId);
    if (!head) return reject('wrong-session', `no session ${sessionId}`);
    const to = Math.min(head.size, after + 1 + Math.min(limit, EVENTS_MAX));
    const rows = await this.store.readRange(sessionId, after + 1, to);
    const events: SessionEvent[] = rows.map((r) => ({ index: r.index, hash: r.hash, entry: decode(r, sessionId) }));
    const next = events.length > 0 ? events[events.length - 1]!.index : after;
    return { ok: true, sessionId, events, next, more: next + 1 < head.size, phase: head.phase };
  }

  /** `session/describe`: phase, head, size, pending frame, counts and the receipt once sealed. */
  async describe(sessionId: unknown): Promise<DescribeResult> {
    if (typeof sessionId !== 'string') return malformed('sessionId must be a string');
    return this.withSession(sessionId, async (st) => ({
      ok: true,
      sessionId: st.sessionId,
      name: st.spec.name,
      phase: st.phase,
      size: st.size,
      head: st.head,
      root: toHex(st.frontier.root()),
      nextOrdinal: st.nextOrdinal,
      ...(st.pending ? { pending: { ordinal: st.pending.ordinal, frameRoot: st.pending.frameRoot, entryHash: st.pending.entryHash, time: st.pending.time } } : {}),
      ...(st.lastFrameTime === undefined ? {} : { lastFrameTime: st.lastFrameTime }),
      counts: st.counts,
      ...(st.seal ? { receipt: st.seal.receipt } : {}),
    }));
  }

  /**
   * The canonical bytes of every entry, in order: write each followed by `\n` to get the bundle.
   * `range` limits it to entries `from` (default 0) up to before `to` (default: the head).
   */
  async *exportEntries(sessionId: string, batch = 256, range: { readonly from?: number; readonly to?: number } = {}): AsyncGenerator<Uint8Array> {
    const head = await this.store.loadHead(sessionId);
    if (!head) throw new StoreCorruptionError(sessionId, 0, 'unknown session');
    const end = Math.min(head.size, range.to ?? head.size);
    for (let from = range.from ?? 0; from < end; from += batch) {
      const rows = await this.store.readRange(sessionId, from, Math.min(end, from + batch));
      for (const r of rows) {
        if (toHex(entryHash(sha256, r.bytes)) !== r.hash) throw new StoreCorruptionError(sessionId, r.index, 'stored hash is not the hash of the stored bytes');
        yield r.bytes;
      }
    }
  }

  /** The session's spec, as sealed in its genesis. */
  async spec(sessionId: string): Promise<SessionSpec | undefined> {
    const st = await this.state(sessionId);
    return st?.spec;
  }

  /** Forgets cached state (the next call reloads and re-derives it from the store). */
  evict(sessionId?: string): void {
    if (sessionId === undefined) this.cache.clear();
    else this.cache.delete(sessionId);
  }

  private async state(sessionId: string): Promise<SessionState | undefined> {
    const cached = this.cache.get(sessionId);
    if (cached) return cached;
    const loaded = await loadState(this.store, sessionId);
    if (loaded) this.cache.set(sessionId, loaded);
    return loaded;
  }

  private withSession<T extends { ok: boolean }>(sessionId: string, fn: (st: SessionState) => Promise<T | Rejection>): Promise<T | Rejection> {
    return this.lock.run(sessionId, async () => {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const st = this.cache.get(sessionId) ?? (await this.state(sessionId));
        if (!st) return reject('wrong-session', `no session ${sessionId}`);
        try {
          return await fn(st);
        } catch (e) {
          if (e instanceof Retry) {
            this.cache.delete(sessionId);
            continue;
          }
          throw e;
        }
      }
      throw new ContentionError(sessionId, MAX_ATTEMPTS);
    });
  }

  /**
   * Compare-and-append `s` on top of `st`. On success caches the next state and
   * returns true; when another writer moved the head (or took a nonce) throws
   * {@link Retry} so the whole verb is reconciled again on fresh state.
   */
  private async commit(
    st: SessionState,
    row: Row,
    nonces: readonly NonceClaim[],
    next: (frontier: Border) => SessionState,
    authored?: Uint8Array,
  ): Promise<true | Rejection> {
    const s = row.s;
    const frontier = st.frontier.append(row.leaf);
    const hex = frontier.hex;
    const outcome: AppendOutcome = await traceAppend(() => this.store.append({
      sessionId: st.sessionId,
      expected: { size: st.size, head: st.head },
      entry: s,
      next: { sessionId: st.sessionId, size: st.size + 1, head: s.hash, frontier: hex, phase: phaseAfter(s.kind) },
      nonces,
    }));
    if (outcome.ok) {
      this.cache.set(st.sessionId, next(frontier));
      // The ruler may fold the entry from here (the value just encoded) instead of reading it back.
      this.ruler?.appended?.(st.sessionId, st.spec, s.index, s.hash, row.entry, authored);
      return true;
    }
    if (outcome.reason === 'unknown-session') return reject('wrong-session', `no session ${st.sessionId}`);
    throw new Retry();
  }
}

// One span and the verb metrics per call (src/telemetry); a no-op unless an OpenTelemetry SDK is registered.
traceVerbs(Engine.prototype, ['open', 'frame', 'turn', 'finalize', 'events', 'describe']);

class Retry extends Error {}

/**
 * Creates a session controller.
 *
 * @example
 * const engine = createEngine();
 * const { sessionId } = await engine.open({ name: 'desk-1', day: '2026-11-30' }) as { sessionId: string };
 */
export function createEngine(options: EngineOptions = {}): Engine {
  return new Engine(options);
}
