import { TallyError } from '../protocol/errors.js';
import { checkSignedRecord, isExpectedLatest } from './rows.js';
import { checkAppendRequest, checkLogLeaf, checkNewSession, checkTile } from './request.js';
import type {
  AppendOutcome,
  AppendRequest,
  ExpectedLatest,
  NonceOwner,
  ReserveOutcome,
  NonceClaim,
  RecordCheckpointOutcome,
  SessionHead,
  SignedCheckpointRecord,
  CosignatureRecord,
  CosignatureStore,
  EngineLogKeyRecord,
  EngineLogStore,
  EngineLogTileStore,
  StoredEntry,
  TranscriptStore,
} from './types.js';
import { activeSpan, recordBatch } from '../telemetry/index.js';

interface MemSession {
  head: SessionHead;
  entries: StoredEntry[];
  frames: Map<number, StoredEntry>;
  turns: Map<number, StoredEntry>;
}

/**
 * In-memory {@link TranscriptStore} for tests and ephemeral use. Each call
 * runs to completion before any other (single-threaded JS, no `await` inside
 * a mutation), which is what makes its compare-and-append atomic.
 *
 * @example
 * const engine = createEngine({ store: new MemoryStore() });
 */
export class MemoryStore implements TranscriptStore, CosignatureStore, EngineLogStore, EngineLogTileStore {
  readonly name = 'memory';
  private readonly sessions = new Map<string, MemSession>();
  private readonly nonces = new Map<string, NonceOwner>();
  /** The signing log: origin → size → record. */
  private readonly signed = new Map<string, Map<number, SignedCheckpointRecord>>();
  private readonly cosigned = new Map<string, CosignatureRecord>();
  private readonly witnessSizes = new Map<string, number>();
  /** The engine log's leaves, by position. */
  private readonly logLeaves: Uint8Array[] = [];
  private readonly logTiles: Uint8Array[][] = [];
  private logKey: EngineLogKeyRecord | undefined;
  private closed = false;

  // Private copies of appended bytes are carved from shared slabs (one
  // allocation per ~1 MiB of entries instead of one per entry). A slab is
  // never handed out: reads copy again.
  private slab = new Uint8Array(SLAB_BYTES);
  private slabUsed = 0;

  private live(): void {
    if (this.closed) throw new Error('MemoryStore is closed');
  }

  /** A private copy of `e` (its bytes in a slab). */
  private keep(e: StoredEntry): StoredEntry {
    const n = e.bytes.length;
    let bytes: Uint8Array;
    if (n > SLAB_BYTES / 8) {
      bytes = new Uint8Array(e.bytes);
    } else {
      if (this.slabUsed + n > SLAB_BYTES) {
        this.slab = new Uint8Array(SLAB_BYTES);
        this.slabUsed = 0;
      }
      bytes = this.slab.subarray(this.slabUsed, this.slabUsed + n);
      bytes.set(e.bytes);
      this.slabUsed += n;
    }
    return e.ordinal === undefined ? { index: e.index, hash: e.hash, bytes, kind: e.kind } : { index: e.index, hash: e.hash, bytes, kind: e.kind, ordinal: e.ordinal };
  }

  async createSession(genesis: StoredEntry, head: SessionHead, logLeaf?: Uint8Array): Promise<'created' | 'exists'> {
    this.live();
    checkNewSession(genesis, head);
    checkLogLeaf(logLeaf);
    if (this.sessions.has(head.sessionId)) return 'exists';
    this.sessions.set(head.sessionId, { head, entries: [this.keep(genesis)], frames: new Map(), turns: new Map() });
    if (logLeaf) this.logLeaves.push(new Uint8Array(logLeaf));
    return 'created';
  }

  async append(req: AppendRequest): Promise<AppendOutcome> {
    this.live();
    checkAppendRequest(req);
    recordBatch(1, [activeSpan()]);
    const s = this.sessions.get(req.sessionId);
    if (!s) return { ok: false, reason: 'unknown-session' };
    if (s.head.phase === 'sealed') return { ok: false, reason: 'sealed' };
    if (s.head.size !== req.expected.size || s.head.head !== req.expected.head || req.entry.index !== s.head.size) {
      return { ok: false, reason: 'head-moved' };
    }
    for (const n of req.nonces) {
      const owner = this.nonces.get(nonceKey(n.agentId, n.nonce));
      if (owner) return { ok: false, reason: 'nonce-taken', agentId: n.agentId, nonce: n.nonce, owner };
    }
    const e = this.keep(req.entry);
    s.entries.push(e);
    if (e.kind === 'frame' && e.ordinal !== undefined) s.frames.set(e.ordinal, e);
    if (e.kind === 'turn' && e.ordinal !== undefined) s.turns.set(e.ordinal, e);
    for (const n of req.nonces) this.nonces.set(nonceKey(n.agentId, n.nonce), { intentHash: n.intentHash, sessionId: req.sessionId, index: e.index });
    s.head = req.next;
    return { ok: true };
  }

  async loadHead(sessionId: string): Promise<SessionHead | undefined> {
    this.live();
    return this.sessions.get(sessionId)?.head;
  }

  async readRange(sessionId: string, from: number, to: number): Promise<StoredEntry[]> {
    this.live();
    const s = this.sessions.get(sessionId);
    if (!s) return [];
    return s.entries.slice(Math.max(0, from), Math.max(0, to)).map(copy);
  }

  async readSlot(sessionId: string, kind: 'frame' | 'turn', ordinal: number): Promise<StoredEntry | undefined> {
    this.live();
    const s = this.sessions.get(sessionId);
    const e = kind === 'frame' ? s?.frames.get(ordinal) : s?.turns.get(ordinal);
    return e ? copy(e) : undefined;
  }

  async nonceOwner(agentId: string, nonce: string): Promise<NonceOwner | undefined> {
    this.live();
    return this.nonces.get(nonceKey(agentId, nonce));
  }

  async reserve(sessionId: string, index: number, claims: readonly NonceClaim[]): Promise<ReserveOutcome> {
    this.live();
    for (const n of claims) {
      const owner = this.nonces.get(nonceKey(n.agentId, n.nonce));
      if (owner) return { ok: false, reason: 'nonce-taken', agentId: n.agentId, nonce: n.nonce, owner };
    }
    for (const n of claims) this.nonces.set(nonceKey(n.agentId, n.nonce), { intentHash: n.intentHash, sessionId, index });
    return { ok: true };
  }

  async listSessions(): Promise<string[]> {
    this.live();
    return [...this.sessions.keys()];
  }

  async recordCheckpoint(record: SignedCheckpointRecord, expected: ExpectedLatest, logLeaf?: Uint8Array): Promise<RecordCheckpointOutcome> {
    this.live();
    checkSignedRecord(record, (m) => new TallyError('TALLY_STORE_MISUSE', m));
    checkLogLeaf(logLeaf);
    const bySize = this.signed.get(record.origin) ?? new Map<number, SignedCheckpointRecord>();
    const existing = bySize.get(record.size);
    if (existing) return existing.root === record.root ? { ok: true, duplicate: true, record: existing } : { ok: false, reason: 'equivocation', record: existing };
    const latest = latestOf(bySize);
    if (!isExpectedLatest(latest, expected)) return { ok: false, reason: 'latest-moved', latest };
    const kept = { origin: record.origin, size: record.size, root: record.root, signedAt: record.signedAt };
    bySize.set(kept.size, kept);
    this.signed.set(kept.origin, bySize);
    if (logLeaf) this.logLeaves.push(new Uint8Array(logLeaf));
    return { ok: true, duplicate: false, record: kept };
  }

  async engineLogSize(): Promise<number> {
    this.live();
    return this.logLeaves.length;
  }

  async engineLogLeaves(from: number, to: number): Promise<Uint8Array[]> {
    this.live();
    return this.logLeaves.slice(Math.max(0, from), Math.max(0, to)).map((l) => new Uint8Array(l));
  }

  async engineLogTileCounts(): Promise<number[]> {
    this.live();
    return this.logTiles.map((level) => level.length);
  }

  async engineLogTiles(level: number, from: number, to: number): Promise<Uint8Array[]> {
    this.live();
    return (this.logTiles[level] ?? []).slice(Math.max(0, from), Math.max(0, to)).map((t) => new Uint8Array(t));
  }

  async claimEngineLogKey(origin: string, verifierKey: string): Promise<EngineLogKeyRecord> {
    this.live();
    this.logKey ??= { origin, verifierKey };
    return { ...this.logKey };
  }

  async putEngineLogTile(level: number, index: number, hashes: Uint8Array): Promise<Uint8Array> {
    this.live();
    checkTile(level, index, hashes);
    while (this.logTiles.length <= level) this.logTiles.push([]);
    const row = this.logTiles[level]!;
    if (index > row.length) throw new TallyError('TALLY_STORE_MISUSE', `engine log tile ${level}/${index} written before tile ${row.length}`);
    if (index === row.length) row.push(new Uint8Array(hashes));
    return new Uint8Array(row[index]!);
  }

  async latestCheckpoint(origin: string): Promise<SignedCheckpointRecord | undefined> {
    this.live();
    const bySize = this.signed.get(origin);
    return bySize && latestOf(bySize);
  }

  async signedCheckpoints(origin: string): Promise<SignedCheckpointRecord[]> {
    this.live();
    return [...(this.signed.get(origin)?.values() ?? [])].sort((a, b) => a.size - b.size);
  }

  async recordCosignature(r: CosignatureRecord): Promise<void> {
    this.live();
    const k = JSON.stringify([r.origin, r.size, r.witness]);
    if (!this.cosigned.has(k)) this.cosigned.set(k, { origin: r.origin, size: r.size, root: r.root, witness: r.witness, line: r.line });
  }

  async cosignatures(origin: string, size: number): Promise<CosignatureRecord[]> {
    this.live();
    return [...this.cosigned.values()].filter((r) => r.origin === origin && r.size === size).sort((a, b) => (a.witness < b.witness ? -1 : 1));
  }

  async recordWitnessSize(witness: string, origin: string, size: number): Promise<void> {
    this.live();
    const k = JSON.stringify([witness, origin]);
    this.witnessSizes.set(k, Math.max(size, this.witnessSizes.get(k) ?? -1));
  }

  async witnessSize(witness: string, origin: string): Promise<number | undefined> {
    this.live();
    return this.witnessSizes.get(JSON.stringify([witness, origin]));
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

function latestOf(bySize: ReadonlyMap<number, SignedCheckpointRecord>): SignedCheckpointRecord | undefined {
  let best: SignedCheckpointRecord | undefined;
  for (const r of bySize.values()) if (best === undefined || r.size > best.size) best = r;
  return best;
}

const SLAB_BYTES = 1 << 20;

function nonceKey(agentId: string, nonce: string): string {
  return `${agentId.length}:${agentId}:${nonce}`;
}

// Stored bytes are private: callers get their own copy, so mutating a returned
// entry can never change the record.
function copy(e: StoredEntry): StoredEntry {
  // `new Uint8Array(view)` always copies (a Buffer's `slice` would not).
  const bytes = new Uint8Array(e.bytes);
  return e.ordinal === undefined ? { index: e.index, hash: e.hash, bytes, kind: e.kind } : { index: e.index, hash: e.hash, bytes, kind: e.kind, ordinal: e.ordinal };
}
