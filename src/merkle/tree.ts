import {
  consistencyProofFromLeafHashes,
  inclusionProofFromLeafHashes,
  rootFromLeafHashes,
} from '../protocol/merkle/index.js';
import { sha256Hasher } from './hasher.js';

/**
 * SHA-256 Merkle Tree Hash of `leafHashes` (each a 32-byte {@link leafHash});
 * `SHA-256('')` for none. O(n); keep a `createMerkleLevels()` tree for repeated use.
 * Throws `TALLY_MERKLE_BAD_HASH` on a hash that is not 32 bytes.
 *
 * @example
 * ```ts
 * const root = rootHash(entries.map((e) => leafHash(e)));
 * ```
 */
export function rootHash(leafHashes: readonly Uint8Array[]): Uint8Array {
  return rootFromLeafHashes(sha256Hasher, leafHashes);
}

/**
 * Inclusion proof (RFC 9162 §2.1.3.1) for leaf `index` in the tree of the
 * first `size` leaf hashes (default: all), siblings from the leaf upwards.
 * Requires `0 <= index < size <= leafHashes.length`, else throws `TALLY_MERKLE_OUT_OF_RANGE`.
 *
 * @example
 * ```ts
 * const proof = inclusionProof(leaves, 2, 5);
 * verifyInclusion(leaves[2], 2, 5, proof, rootHash(leaves.slice(0, 5))); // { ok: true }
 * ```
 */
export function inclusionProof(leafHashes: readonly Uint8Array[], index: number, size?: number): Uint8Array[] {
  return inclusionProofFromLeafHashes(sha256Hasher, leafHashes, index, size ?? leafHashes.length);
}

/**
 * Consistency proof (RFC 9162 §2.1.4.1) from the tree of the first `size1`
 * leaf hashes to the tree of the first `size2`. Requires
 * `0 < size1 <= size2 <= leafHashes.length` (or both 0), else throws
 * `TALLY_MERKLE_OUT_OF_RANGE`; equal sizes give `[]`.
 *
 * @example
 * ```ts
 * const proof = consistencyProof(leaves, 6, 8);
 * verifyConsistency(6, 8, rootHash(leaves.slice(0, 6)), rootHash(leaves), proof); // { ok: true }
 * ```
 */
export function consistencyProof(leafHashes: readonly Uint8Array[], size1: number, size2: number): Uint8Array[] {
  return consistencyProofFromLeafHashes(sha256Hasher, leafHashes, size1, size2);
}
