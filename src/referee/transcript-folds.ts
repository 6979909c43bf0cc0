/**
 * The one way a ruler derives per-session state from a transcript as stored:
 * the fold of every entry up to a point. Per session it keeps the last state
 * and the hash of the last entry folded, and continues from there while that
 * entry is still in place (transcripts only grow); anything else is re-folded
 * from the genesis. So a restart, a second engine on the same store, or a
 * replay into a fresh store all derive the same state from the same bytes.
 * The referee (`RefereeHistory`), the MCP gateway's tool ruling
 * (`ToolHistory`) and the x402 payment referee (`PaymentsHistory`) fold
 * through it; each gives only its start and its step.
 */
import { parseEntry, type Entry, type GenesisEntry, type TallyError } from '../protocol/index.js';
import { KeyedMutex } from '../session/mutex.js';
import type { StoredEntry } from '../store/types.js';

/** Where a ruler reads a session's entries (the engine's store). */
export interface EntrySource {
  /** Entries with `from <= index < to`, in order. */
  readRange(sessionId: string, from: number, to: number): Promise<StoredEntry[]>;
}

/** What one ruler folds. */
export interface FoldSteps<S> {
  /** The error for a transcript this fold cannot read (each ruler has its own code). */
  inconsistent(sessionId: string, index: number, what: string): TallyError;
  /** The state after the genesis, or `undefined` when this ruler does not fold the session. */
  start(genesis: GenesisEntry, sessionId: string): S | undefined;
  /** Folds entry `index` (1 on) into `state`. */
  step(state: S, entry: Entry, index: number, sessionId: string): void;
}

/** A state and the entries folded into it. */
export interface Folded<S> {
  readonly state: S;
  readonly size: number;
}

interface Cached<S> {
  state: S;
  size: number;
  lastHash: string;
}

// Small pages: each page's rows die young (in the scavenged young generation) instead of being
// promoted while the page is processed (one of the changes that brought a million-entry day's
// replay under 256 MB; docs/PERFORMANCE.md and ARCHITECTURE.md, "Long days").
const BATCH = 256;
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The per-session folds of one entry source.
 *
 * @example
 * const folds = new TranscriptFolds(store, steps);
 * const r = await folds.fold(sessionId, head.size); // r?.state, r?.size
 */
export class TranscriptFolds<S> {
  private readonly cache = new Map<string, Cached<S>>();
  private readonly lock = new KeyedMutex();
  /** Sessions whose fold is running now (an offered entry never races one). */
  private readonly running = new Set<string>();

  /**
   * @param source where the entries are read
   * @param steps the ruler's start and step
   * @param maxSessions folds kept (least recently used are dropped and re-folded on demand)
   */
  constructor(
    private readonly source: EntrySource,
    private readonly steps: FoldSteps<S>,
    private readonly maxSessions = 1024,
  ) {}

  /**
   * The state after the first `size` entries of `sessionId`; `undefined` when
   * the ruler does not fold the session. Throws the ruler's error when the
   * store holds fewer entries or an entry cannot be read.
   */
  fold(sessionId: string, size: number): Promise<Folded<S> | undefined> {
    return this.lock.run(sessionId, async () => {
      this.running.add(sessionId);
      try {
        return await this.foldNow(sessionId, size);
      } finally {
        this.running.delete(sessionId);
      }
    });
  }

  /**
   * An entry the caller has just appended, in hand (its value, which the
   * caller encoded into the stored bytes of `hash`): folded straight into the
   * cached fold when it provably extends it — the fold stands at `index`
   * exactly and its last entry is `parent`, the entry's own parent link —
   * instead of being read back and decoded on the next {@link fold}. In any
   * other case it is ignored and the next fold reads the store, as always.
   * `step` (default: the ruler's) folds it; it must fold the same value the
   * ruler's step would fold from the stored bytes.
   */
  offer(sessionId: string, index: number, hash: string, parent: string, entry: Entry, step: FoldSteps<S>['step'] = this.steps.step): void {
    if (this.running.has(sessionId)) return;
    const c = this.cache.get(sessionId);
    if (c === undefined || c.size !== index || c.lastHash !== parent) return;
    try {
      step(c.state, entry, index, sessionId);
    } catch {
      // A step that refuses leaves a state half-folded: drop it, the next fold reads the store.
      this.cache.delete(sessionId);
      return;
    }
    c.size = index + 1;
    c.lastHash = hash;
  }

  private async foldNow(sessionId: string, size: number): Promise<Folded<S> | undefined> {
    let c = this.cache.get(sessionId);
    if (c && c.size > size) c = undefined;
    if (c) {
      // Content-addressed: continue only if the last entry folded is still the one in this store.
      const [last] = await this.source.readRange(sessionId, c.size - 1, c.size);
      if (!last || last.hash !== c.lastHash) c = undefined;
    }
    if (!c) {
      const [g] = await this.source.readRange(sessionId, 0, 1);
      if (!g) throw this.steps.inconsistent(sessionId, 0, 'no genesis');
      const e = this.decode(sessionId, g);
      if (e.kind !== 'genesis') throw this.steps.inconsistent(sessionId, 0, 'the first entry is not a genesis');
      const state = this.steps.start(e, sessionId);
      if (state === undefined) return undefined;
      c = { state, size: 1, lastHash: g.hash };
    }
    while (c.size < size) {
      const rows = await this.source.readRange(sessionId, c.size, Math.min(size, c.size + BATCH));
      if (rows.length === 0) throw this.steps.inconsistent(sessionId, c.size, `the store holds fewer than ${size} entries`);
      for (const row of rows) {
        if (row.index !== c.size) throw this.steps.inconsistent(sessionId, row.index, `expected entry ${c.size}`);
        this.steps.step(c.state, this.decode(sessionId, row), row.index, sessionId);
        c.size = row.index + 1;
        c.lastHash = row.hash;
      }
    }
    this.cache.delete(sessionId);
    this.cache.set(sessionId, c);
    if (this.cache.size > this.maxSessions) this.cache.delete(this.cache.keys().next().value!);
    return { state: c.state, size: c.size };
  }

  /** Forgets the cached fold of one session (or all). */
  evict(sessionId?: string): void {
    if (sessionId === undefined) this.cache.clear();
    else this.cache.delete(sessionId);
  }

  private decode(sessionId: string, row: StoredEntry): Entry {
    let value: unknown;
    try {
      value = JSON.parse(decoder.decode(row.bytes));
    } catch {
      throw this.steps.inconsistent(sessionId, row.index, 'not JSON');
    }
    const r = parseEntry(value);
    if (!r.ok) throw this.steps.inconsistent(sessionId, row.index, r.reason);
    return r.entry;
  }
}
