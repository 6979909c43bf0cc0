/**
 * Derives a session's referee state from its transcript, as stored: the fold
 * of every entry up to a point. Per session it keeps the last fold and the
 * hash of the last entry folded, and continues from there when that entry is
 * still in place (transcripts only grow); anything else is re-folded from the
 * genesis. So an engine restart, a second engine on the same store, or a
 * replay into a fresh store all derive the same state from the same bytes.
 */
import { intentHash } from '../intent/canonical.js';
import { fromBase64, parseEntry, TallyError, type Entry, type TurnEntry } from '../protocol/index.js';
import { intentOfAuthored } from '../rules/intent.js';
import { KeyedMutex } from '../session/mutex.js';
import type { StoredEntry } from '../store/types.js';
import { mandateOf, type Mandate, type ParseMandateOptions } from './mandate.js';
import { lockTicket, makeTicket, parseAnchoredIntent, emptyFold, type RefereeFold } from './state.js';
import { applyFrameTransitions } from './transitions.js';

/** Where the referee reads a session's entries (the engine's store). */
export interface EntrySource {
  /** Entries with `from <= index < to`, in order. */
  readRange(sessionId: string, from: number, to: number): Promise<StoredEntry[]>;
}

/** A fold and where it stands. */
export interface FoldView {
  readonly mandate: Mandate;
  readonly fold: RefereeFold;
  /** Entries folded. */
  readonly size: number;
  /** Time of the last frame folded. */
  readonly time: number | undefined;
}

interface Cached {
  mandate: Mandate;
  fold: RefereeFold;
  size: number;
  lastHash: string;
  time: number | undefined;
}

// Small pages: each page's rows die young (in the scavenged young generation) instead of being
// promoted while the page is processed (one of the changes that brought a million-entry day's
// replay under 256 MB; docs/PERFORMANCE.md and ARCHITECTURE.md, "Long days").
const BATCH = 256;
const decoder = new TextDecoder('utf-8', { fatal: true });

function inconsistent(sessionId: string, index: number, what: string): TallyError {
  return new TallyError('TALLY_REFEREE_TRANSCRIPT', 'The transcript is inconsistent with the referee.', { details: `session ${sessionId} entry ${index}: ${what}` });
}

function decodeEntry(sessionId: string, row: StoredEntry): Entry {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(row.bytes));
  } catch {
    throw inconsistent(sessionId, row.index, 'not JSON');
  }
  const r = parseEntry(value);
  if (!r.ok) throw inconsistent(sessionId, row.index, r.reason);
  return r.entry;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Folds one turn: an admission locks a ticket; a judgment enters the verdict index. */
function foldTurn(c: Cached, sessionId: string, index: number, e: TurnEntry): void {
  const r = e.ruling;
  if (!isObject(r) || !isObject(r['intent'])) return;
  const ir = r['intent'];
  const time = c.time ?? 0;
  if (isObject(r['ticket'])) {
    const bytes = e.body.kind === 'authored' ? fromBase64(e.body.bytes) : undefined;
    const carried = bytes ? intentOfAuthored(bytes) : undefined;
    const intent = carried ? parseAnchoredIntent(carried.intent) : undefined;
    if (!intent) throw inconsistent(sessionId, index, 'a ticket was issued for a turn that carries no valid intent');
    lockTicket(c.fold, makeTicket(c.mandate, sessionId, c.fold, intent, intentHash(intent), e.ordinal, time));
  }
  const v = r['verdict'];
  const hash = ir['intent_hash'];
  if (isObject(v) && v['source'] === 'judged' && typeof hash === 'string') {
    if (v['code'] !== 'judge_unavailable' && !c.fold.verdicts.has(hash)) {
      c.fold.verdicts.set(hash, {
        ordinal: e.ordinal,
        admitted: v['admitted'] === true,
        ...(typeof v['code'] === 'string' ? { code: v['code'] } : {}),
        message: typeof v['message'] === 'string' ? v['message'] : '',
      });
    }
  }
}

function foldRow(c: Cached, sessionId: string, row: StoredEntry): void {
  const e = decodeEntry(sessionId, row);
  if (e.kind === 'frame') {
    const outcomes = applyFrameTransitions(c.fold, c.mandate, sessionId, e.ordinal, e.time, e.data);
    if (outcomes) for (const outcome of outcomes) c.fold.log.push({ ordinal: e.ordinal, time: e.time, outcome });
    c.fold.lastFrame = { ordinal: e.ordinal, time: e.time, outcomes };
    c.time = e.time;
  } else if (e.kind === 'turn') {
    foldTurn(c, sessionId, row.index, e);
  }
  c.size = row.index + 1;
  c.lastHash = row.hash;
}

/**
 * The per-session folds of one entry source.
 *
 * @example
 * const history = new RefereeHistory(store);
 * const view = await history.fold(sessionId, head.size);
 * view?.fold.locked;
 */
export class RefereeHistory {
  private readonly cache = new Map<string, Cached>();
  private readonly lock = new KeyedMutex();

  /**
   * @param source where the entries are read
   * @param maxSessions folds kept (least recently used are dropped and re-folded on demand)
   * @param mandates `{legacy: true}` also folds version-1 (unsigned) mandates (replay only)
   */
  constructor(
    private readonly source: EntrySource,
    private readonly maxSessions = 1024,
    private readonly mandates: ParseMandateOptions = {},
  ) {}

  /**
   * The referee state after the first `size` entries of `sessionId`;
   * `undefined` when the session has no (valid) mandate. Throws
   * `TALLY_REFEREE_TRANSCRIPT` when the store holds fewer entries.
   */
  fold(sessionId: string, size: number): Promise<FoldView | undefined> {
    return this.lock.run(sessionId, async () => {
      let c = this.cache.get(sessionId);
      if (c && c.size > size) c = undefined;
      if (c) {
        // Content-addressed: continue only if the last entry folded is still the one in this store.
        const [last] = await this.source.readRange(sessionId, c.size - 1, c.size);
        if (!last || last.hash !== c.lastHash) c = undefined;
      }
      if (!c) {
        const [g] = await this.source.readRange(sessionId, 0, 1);
        if (!g) throw inconsistent(sessionId, 0, 'no genesis');
        const e = decodeEntry(sessionId, g);
        if (e.kind !== 'genesis') throw inconsistent(sessionId, 0, 'the first entry is not a genesis');
        const sealed = mandateOf(e.spec, this.mandates);
        if (sealed.kind !== 'mandate') return undefined;
        c = { mandate: sealed.mandate, fold: emptyFold(), size: 1, lastHash: g.hash, time: undefined };
      }
      while (c.size < size) {
        const rows = await this.source.readRange(sessionId, c.size, Math.min(size, c.size + BATCH));
        if (rows.length === 0) throw inconsistent(sessionId, c.size, `the store holds fewer than ${size} entries`);
        for (const row of rows) {
          if (row.index !== c.size) throw inconsistent(sessionId, row.index, `expected entry ${c.size}`);
          foldRow(c, sessionId, row);
        }
      }
      this.cache.delete(sessionId);
      this.cache.set(sessionId, c);
      if (this.cache.size > this.maxSessions) this.cache.delete(this.cache.keys().next().value!);
      return { mandate: c.mandate, fold: c.fold, size: c.size, time: c.time };
    });
  }

  /** Forgets the cached fold of one session (or all). */
  evict(sessionId?: string): void {
    if (sessionId === undefined) this.cache.clear();
    else this.cache.delete(sessionId);
  }
}
