/**
 * A single-process scratch {@link TranscriptStore} on a throwaway SQLite file:
 * what `replay` re-derives a day into, so a day of any length costs bounded
 * memory (the file holds what grows) at close to the memory store's speed.
 */
import Database from 'better-sqlite3';
import { TallyError } from '../protocol/errors.js';
import { MemoryStore } from './memory.js';
import { checkAppendRequest, checkNewSession } from './request.js';
import { toEntry, toOwner, type EntryRow, type OwnerRow } from './rows.js';
import type {
  AppendOutcome,
  AppendRequest,
  ExpectedLatest,
  NonceOwner,
  RecordCheckpointOutcome,
  SessionHead,
  SignedCheckpointRecord,
  StoredEntry,
  TranscriptStore,
} from './types.js';

/** Options of {@link ScratchStore}. */
export interface ScratchStoreOptions {
  /**
   * Appends buffered in memory before they are written in one transaction
   * (default 256: a transaction with no journal and no fsync costs little, and
   * the buffer — entry copies, slot keys, hashes — is live heap a long replay's
   * collector multiplies).
   */
  readonly batch?: number;
  /**
   * SQLite page cache in KiB (default 2048). Appends go to the end of the file
   * and reads are slot lookups near it, so a small cache costs no speed and
   * keeps the driver's 16 MiB default out of a long replay's memory.
   */
  readonly cacheKiB?: number;
}

const SCHEMA = `
CREATE TABLE entries (session_id TEXT NOT NULL, idx INTEGER NOT NULL, hash TEXT NOT NULL, kind TEXT NOT NULL, ordinal INTEGER, bytes BLOB NOT NULL, PRIMARY KEY (session_id, idx)) WITHOUT ROWID;
CREATE UNIQUE INDEX entries_slot ON entries (session_id, kind, ordinal) WHERE ordinal IS NOT NULL;
CREATE TABLE nonces (agent_id TEXT NOT NULL, nonce TEXT NOT NULL, intent_hash TEXT NOT NULL, session_id TEXT NOT NULL, idx INTEGER NOT NULL, PRIMARY KEY (agent_id, nonce)) WITHOUT ROWID;
`;

interface Pending {
  readonly sessionId: string;
  readonly entry: StoredEntry;
}

function key(...parts: readonly (string | number)[]): string {
  return JSON.stringify(parts);
}

function copy(e: StoredEntry): StoredEntry {
  const bytes = new Uint8Array(e.bytes);
  return e.ordinal === undefined ? { index: e.index, hash: e.hash, bytes, kind: e.kind } : { index: e.index, hash: e.hash, bytes, kind: e.kind, ordinal: e.ordinal };
}

/**
 * A {@link TranscriptStore} for ONE process that nobody else opens, on a
 * scratch SQLite file (no journal, no fsync: a crash loses the scratch, which
 * is thrown away anyway). Heads live in memory (one per session); entries,
 * slots and nonce reservations are buffered for at most `batch` appends and
 * then written in one transaction, and every read sees the buffer and the
 * file alike. So its memory is O(sessions + batch) however many entries it
 * holds, and an append costs no commit of its own.
 *
 * The contract holds within the process: compare-and-append is atomic
 * because a mutation runs to completion without an `await` (as in the memory
 * store), and nonce reservations span every session of the store. It is not
 * durable and MUST NOT be shared between processes. The signing log is kept
 * in memory (scratch days are not signed from).
 *
 * @example
 * const store = new ScratchStore(join(mkdtempSync(join(tmpdir(), 'x-')), 'scratch.db'));
 * const engine = createEngine({ store });
 */
export class ScratchStore implements TranscriptStore {
  readonly name: string;
  readonly #db: Database.Database;
  readonly #batch: number;
  readonly #heads = new Map<string, SessionHead>();
  /** Appends not yet written, in order; per session they are contiguous and ascending. */
  #pending: Pending[] = [];
  readonly #pendingBySession = new Map<string, StoredEntry[]>();
  readonly #pendingSlots = new Map<string, StoredEntry>();
  readonly #pendingNonces = new Map<string, { readonly agentId: string; readonly nonce: string; readonly owner: NonceOwner }>();
  readonly #log = new MemoryStore();
  readonly #q: {
    readonly insertEntry: Database.Statement<[string, number, string, string, number | null, Uint8Array]>;
    readonly insertNonce: Database.Statement<[string, string, string, string, number]>;
    readonly range: Database.Statement<[string, number, number], EntryRow>;
    readonly slot: Database.Statement<[string, string, number], EntryRow>;
    readonly owner: Database.Statement<[string, string], OwnerRow>;
  };
  readonly #flushTx: () => void;
  #closed = false;

  /** Creates the scratch file at `path` (which must not exist yet). */
  constructor(path: string, options: ScratchStoreOptions = {}) {
    const batch = options.batch ?? 256;
    if (!Number.isSafeInteger(batch) || batch < 1) throw new RangeError(`batch must be a positive integer, got ${batch}`);
    const cacheKiB = options.cacheKiB ?? 2048;
    if (!Number.isSafeInteger(cacheKiB) || cacheKiB < 1) throw new RangeError(`cacheKiB must be a positive integer, got ${cacheKiB}`);
    this.#batch = batch;
    this.name = `scratch:${path}`;
    try {
      this.#db = new Database(path);
      this.#db.pragma('journal_mode = OFF');
      this.#db.pragma('synchronous = OFF');
      this.#db.pragma(`cache_size = -${cacheKiB}`);
      this.#db.exec(SCHEMA);
    } catch (cause) {
      throw new TallyError('TALLY_STORE_OPEN', `Cannot create the scratch database ${path}.`, { details: String(cause), cause });
    }
    const db = this.#db;
    this.#q = {
      insertEntry: db.prepare('INSERT INTO entries (session_id, idx, hash, kind, ordinal, bytes) VALUES (?, ?, ?, ?, ?, ?)'),
      insertNonce: db.prepare('INSERT INTO nonces (agent_id, nonce, intent_hash, session_id, idx) VALUES (?, ?, ?, ?, ?)'),
      range: db.prepare('SELECT idx, hash, kind, ordinal, bytes FROM entries WHERE session_id = ? AND idx >= ? AND idx < ? ORDER BY idx'),
      slot: db.prepare('SELECT idx, hash, kind, ordinal, bytes FROM entries WHERE session_id = ? AND kind = ? AND ordinal = ?'),
      owner: db.prepare('SELECT intent_hash, session_id, idx FROM nonces WHERE agent_id = ? AND nonce = ?'),
    };
    this.#flushTx = db.transaction(() => {
      for (const p of this.#pending) {
        const e = p.entry;
        this.#q.insertEntry.run(p.sessionId, e.index, e.hash, e.kind, e.ordinal ?? null, e.bytes);
      }
      for (const n of this.#pendingNonces.values()) this.#q.insertNonce.run(n.agentId, n.nonce, n.owner.intentHash, n.owner.sessionId, n.owner.index);
    });
  }

  #live(): void {
    if (this.#closed) throw new TallyError('TALLY_STORE_CLOSED', 'The scratch store is closed.');
  }

  /** Keeps `e` (a private copy) and writes the buffer once it is full. */
  #keep(sessionId: string, e: StoredEntry): void {
    const kept = copy(e);
    this.#pending.push({ sessionId, entry: kept });
    const list = this.#pendingBySession.get(sessionId);
    if (list) list.push(kept);
    else this.#pendingBySession.set(sessionId, [kept]);
    if (kept.ordinal !== undefined && (kept.kind === 'frame' || kept.kind === 'turn')) this.#pendingSlots.set(key(sessionId, kept.kind, kept.ordinal), kept);
    if (this.#pending.length >= this.#batch) this.#flush();
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    this.#flushTx();
    this.#pending = [];
    this.#pendingBySession.clear();
    this.#pendingSlots.clear();
    this.#pendingNonces.clear();
  }

  #owner(agentId: string, nonce: string): NonceOwner | undefined {
    const p = this.#pendingNonces.get(key(agentId, nonce));
    if (p) return p.owner;
    const row = this.#q.owner.get(agentId, nonce);
    return row ? toOwner(row) : undefined;
  }

  async createSession(genesis: StoredEntry, head: SessionHead): Promise<'created' | 'exists'> {
    this.#live();
    checkNewSession(genesis, head);
    if (this.#heads.has(head.sessionId)) return 'exists';
    this.#heads.set(head.sessionId, head);
    this.#keep(head.sessionId, genesis);
    return 'created';
  }

  async append(req: AppendRequest): Promise<AppendOutcome> {
    this.#live();
    checkAppendRequest(req);
    const head = this.#heads.get(req.sessionId);
    if (!head) return { ok: false, reason: 'unknown-session' };
    if (head.phase === 'sealed') return { ok: false, reason: 'sealed' };
    if (head.size !== req.expected.size || head.head !== req.expected.head || req.entry.index !== head.size) return { ok: false, reason: 'head-moved' };
    for (const n of req.nonces) {
      const owner = this.#owner(n.agentId, n.nonce);
      if (owner) return { ok: false, reason: 'nonce-taken', agentId: n.agentId, nonce: n.nonce, owner };
    }
    for (const n of req.nonces) {
      this.#pendingNonces.set(key(n.agentId, n.nonce), { agentId: n.agentId, nonce: n.nonce, owner: { intentHash: n.intentHash, sessionId: req.sessionId, index: req.entry.index } });
    }
    this.#heads.set(req.sessionId, req.next);
    this.#keep(req.sessionId, req.entry);
    return { ok: true };
  }

  async loadHead(sessionId: string): Promise<SessionHead | undefined> {
    this.#live();
    return this.#heads.get(sessionId);
  }

  async readRange(sessionId: string, from: number, to: number): Promise<StoredEntry[]> {
    this.#live();
    const lo = Math.max(0, from);
    const hi = Math.max(lo, to);
    const pending = this.#pendingBySession.get(sessionId) ?? [];
    const firstPending = pending[0]?.index ?? Infinity;
    const out = lo < firstPending ? this.#q.range.all(sessionId, lo, Math.min(hi, firstPending)).map(toEntry) : [];
    for (const e of pending) if (e.index >= lo && e.index < hi) out.push(copy(e));
    return out;
  }

  async readSlot(sessionId: string, kind: 'frame' | 'turn', ordinal: number): Promise<StoredEntry | undefined> {
    this.#live();
    const p = this.#pendingSlots.get(key(sessionId, kind, ordinal));
    if (p) return copy(p);
    const row = this.#q.slot.get(sessionId, kind, ordinal);
    return row ? toEntry(row) : undefined;
  }

  async nonceOwner(agentId: string, nonce: string): Promise<NonceOwner | undefined> {
    this.#live();
    return this.#owner(agentId, nonce);
  }

  async listSessions(): Promise<string[]> {
    this.#live();
    return [...this.#heads.keys()];
  }

  recordCheckpoint(record: SignedCheckpointRecord, expected: ExpectedLatest): Promise<RecordCheckpointOutcome> {
    this.#live();
    return this.#log.recordCheckpoint(record, expected);
  }

  latestCheckpoint(origin: string): Promise<SignedCheckpointRecord | undefined> {
    this.#live();
    return this.#log.latestCheckpoint(origin);
  }

  signedCheckpoints(origin: string): Promise<SignedCheckpointRecord[]> {
    this.#live();
    return this.#log.signedCheckpoints(origin);
  }

  /** Closes the file (buffered appends are dropped with it: the scratch is thrown away). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
    await this.#log.close();
  }
}
