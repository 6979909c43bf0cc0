/**
 * The engine's in-memory picture of one session, and how it is (re)built
 * from a store: every stored row is re-hashed and re-linked by the pure chain
 * verifier (store hashes are never trusted); adjudication is NOT re-run.
 */
import { ChainVerifier, Frontier, borderAppend, borderRoot, rfc6962Hasher, toHex, canonicalJson, type CanonicalValue, type SessionPhase, type SessionSpec } from '../protocol/index.js';
import { sha256 } from '../codec/sha256.js';
import type { TranscriptStore } from '../store/types.js';
import { StoreCorruptionError } from './errors.js';
import type { Receipt, SessionCounts } from './types.js';

/** The engine's view of a session; replaced (never mutated) after each append. */
export interface SessionState {
  readonly sessionId: string;
  readonly spec: SessionSpec;
  readonly size: number;
  readonly head: string;
  /** The Merkle border over all `size` entries (with its hex, as the store keeps it). */
  readonly frontier: Border;
  readonly phase: SessionPhase;
  readonly nextOrdinal: number;
  readonly pending: { readonly ordinal: number; readonly frameRoot: string; readonly entryHash: string; readonly time: number; readonly data?: CanonicalValue } | undefined;
  readonly lastFrameTime: number | undefined;
  readonly counts: SessionCounts;
  readonly seal: { readonly receipt: Receipt; readonly artifactsText: string } | undefined;
}

/** The SHA-256 RFC 6962 hasher used everywhere above the protocol layer. */
export const hasher = rfc6962Hasher(sha256);

// Small pages: each page's rows die young (in the scavenged young generation) instead of being
// promoted while the page is processed (one of the changes that brought a million-entry day's
// replay under 256 MB; docs/PERFORMANCE.md and ARCHITECTURE.md, "Long days").
const BATCH = 256;

/** Loads and re-derives a session from `store`; `undefined` when unknown. Throws {@link StoreCorruptionError}. */
export async function loadState(store: TranscriptStore, sessionId: string): Promise<SessionState | undefined> {
  const head = await store.loadHead(sessionId);
  if (!head) return undefined;
  const v = new ChainVerifier(sha256);
  let spec: SessionSpec | undefined;
  let pending: SessionState['pending'];
  let nextOrdinal = -1;
  let lastFrameTime: number | undefined;
  let frames = 0;
  let turns = 0;
  let authored = 0;
  let standDowns = 0;
  let seal: SessionState['seal'];
  let lastHash = '';
  for (let from = 0; from < head.size; from += BATCH) {
    const rows = await store.readRange(sessionId, from, Math.min(head.size, from + BATCH));
    if (rows.length === 0) throw new StoreCorruptionError(sessionId, from, `head says ${head.size} entries, store returned none from ${from}`);
    for (const row of rows) {
      const r = v.push(row.bytes);
      if (!r.ok) throw new StoreCorruptionError(sessionId, r.index, `${r.code}: ${r.message}`);
      if (row.index !== r.index) throw new StoreCorruptionError(sessionId, r.index, `row index ${row.index} out of order`);
      if (row.hash !== r.hash) throw new StoreCorruptionError(sessionId, r.index, `stored hash ${row.hash} is not the hash of the stored bytes (${r.hash})`);
      const e = r.entry;
      if (e.kind === 'genesis') spec = e.spec;
      else if (e.kind === 'frame') {
        pending = e.data === undefined ? { ordinal: e.ordinal, frameRoot: e.frameRoot, entryHash: r.hash, time: e.time } : { ordinal: e.ordinal, frameRoot: e.frameRoot, entryHash: r.hash, time: e.time, data: e.data };
        lastFrameTime = e.time;
        frames++;
      } else if (e.kind === 'turn') {
        pending = undefined;
        nextOrdinal = e.ordinal + 1;
        turns++;
        if (e.body.kind === 'authored') authored++;
        else standDowns++;
      } else {
        seal = {
          receipt: { sessionId, size: r.index + 1, receiptRoot: '', head: r.hash },
          artifactsText: canonicalJson(e.artifacts ?? {}),
        };
      }
      lastHash = r.hash;
    }
  }
  const sum = v.finish({ requireSealed: false });
  if (!sum.ok) throw new StoreCorruptionError(sessionId, sum.index, `${sum.code}: ${sum.message}`);
  if (sum.size !== head.size || sum.head !== head.head || lastHash !== head.head) {
    throw new StoreCorruptionError(sessionId, sum.size - 1, `stored head (${head.size}, ${head.head}) disagrees with the entries (${sum.size}, ${sum.head})`);
  }
  const frontierHashes = v.frontierHashes();
  const stored = head.frontier;
  if (stored.length !== frontierHashes.length || stored.some((h, i) => h !== toHex(frontierHashes[i]!))) {
    throw new StoreCorruptionError(sessionId, sum.size - 1, 'stored Merkle frontier disagrees with the entries');
  }
  const phase: SessionPhase = seal ? 'sealed' : pending ? 'pending' : 'awaiting-frame';
  if (phase !== head.phase) throw new StoreCorruptionError(sessionId, sum.size - 1, `stored phase ${head.phase}, entries say ${phase}`);
  if (seal) seal = { ...seal, receipt: { ...seal.receipt, receiptRoot: sum.receiptRoot } };
  return {
    sessionId,
    spec: spec!,
    size: sum.size,
    head: sum.head,
    frontier: Border.of(sum.size, frontierHashes, stored),
    phase,
    nextOrdinal,
    pending,
    lastFrameTime,
    counts: { frames, turns, authored, standDowns },
    seal,
  };
}

/**
 * An immutable RFC 6962 compact range (the border roots of the perfect
 * subtrees over `size` leaves, largest first) together with its hex, as stores
 * persist it. {@link Border.append} returns a new border that SHARES every
 * unchanged root with this one (roots are never mutated), so an append costs
 * only the hashes it completes and one hex encoding. The tree arithmetic is the
 * protocol's (`borderAppend` / `borderRoot`, which `Frontier` also uses).
 */
export class Border {
  private constructor(
    /** Number of leaves. */
    readonly size: number,
    /** Border roots, largest subtree first; never mutated. */
    readonly roots: readonly Uint8Array[],
    /** `roots` as lowercase hex. */
    readonly hex: readonly string[],
  ) {}

  /** The empty border (size 0). */
  static readonly EMPTY = new Border(0, [], []);

  /** A border from a verified frontier's hashes (copied). */
  static of(size: number, roots: readonly Uint8Array[], hex: readonly string[] = roots.map(toHex)): Border {
    const f = Frontier.fromHashes(hasher, size, roots); // validates size and count
    return new Border(size, f.hashes(), [...hex]);
  }

  /** The border after appending one 32-byte leaf hash (only the last root needs new hex). */
  append(leaf: Uint8Array): Border {
    const roots = borderAppend(hasher, this.size, this.roots, leaf);
    const hex = this.hex.slice(0, roots.length - 1);
    hex.push(toHex(roots[roots.length - 1]!));
    return new Border(this.size + 1, roots, hex);
  }

  /** Merkle Tree Hash over the `size` leaves (`H('')` when empty). */
  root(): Uint8Array {
    return borderRoot(hasher, this.roots);
  }
}
