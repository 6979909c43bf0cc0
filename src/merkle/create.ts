import { Frontier, MerkleLevels } from '../protocol/merkle/index.js';
import { sha256Hasher } from './hasher.js';

/** Persisted state of a {@link Frontier}: its size and `frontier.hashes()`. */
export interface FrontierState {
  readonly size: number;
  readonly hashes: readonly Uint8Array[];
}

/**
 * A SHA-256 {@link Frontier} (O(log n) compact range from leaf 0): empty, or
 * restored from `{ size, hashes }` (throws `TALLY_MERKLE_FRONTIER_MALFORMED`
 * unless there are exactly popcount(size) 32-byte hashes).
 *
 * @example
 * ```ts
 * const f = createFrontier();
 * f.append(leafHash(entryBytes));
 * const again = createFrontier({ size: f.size, hashes: f.hashes() });
 * again.root(); // equals f.root()
 * ```
 */
export function createFrontier(state?: FrontierState): Frontier {
  return state === undefined ? new Frontier(sha256Hasher) : Frontier.fromHashes(sha256Hasher, state.size, state.hashes);
}

/**
 * A SHA-256 {@link MerkleLevels} tree (every perfect-subtree hash kept, so
 * roots and proofs for any past size cost O(log n)), optionally seeded with
 * leaf hashes.
 *
 * @example
 * ```ts
 * const tree = createMerkleLevels(leaves);
 * tree.append(leafHash(moreBytes));
 * const proof = tree.consistencyProof(3, tree.size);
 * ```
 */
export function createMerkleLevels(leafHashes: readonly Uint8Array[] = []): MerkleLevels {
  const tree = new MerkleLevels(sha256Hasher);
  for (const h of leafHashes) tree.append(h);
  return tree;
}
