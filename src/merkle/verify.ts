import {
  verifyConsistency as verifyConsistencyWith,
  verifyInclusion as verifyInclusionWith,
  type MerkleCheck,
} from '../protocol/merkle/index.js';
import { sha256Hasher } from './hasher.js';

/**
 * Verifies an RFC 9162 §2.1.3.2 SHA-256 inclusion proof: `leafHash` is leaf
 * `index` of the `size`-leaf tree with root `root`. Requires
 * `0 <= index < size`. Never throws: bad input, a wrong-length hash or proof
 * and a mismatch are `{ ok: false, code, message }` (a `root-mismatch` also
 * carries `computedHex` and `expectedHex`).
 *
 * @example
 * ```ts
 * const v = verifyInclusion(leafHash(entryBytes), 2, 5, proof, root);
 * if (!v.ok) throw new Error(`${v.code}: ${v.message}`);
 * ```
 */
export function verifyInclusion(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): MerkleCheck {
  return verifyInclusionWith(sha256Hasher, index, size, leafHash, proof, root);
}

/**
 * Verifies an RFC 9162 §2.1.4.2 SHA-256 consistency proof: the `size2`-leaf
 * tree with root `root2` extends the `size1`-leaf tree with root `root1`.
 * Requires `0 < size1 <= size2` (equal sizes need an empty proof and equal
 * roots; size 0 only against size 0 with both roots `SHA-256('')`). Never
 * throws; failures are `{ ok: false, code, message }`.
 *
 * @example
 * ```ts
 * const v = verifyConsistency(6, 8, root6, root8, proof);
 * if (!v.ok) throw new Error(`${v.code}: ${v.message}`);
 * ```
 */
export function verifyConsistency(
  size1: number,
  size2: number,
  root1: Uint8Array,
  root2: Uint8Array,
  proof: readonly Uint8Array[],
): MerkleCheck {
  return verifyConsistencyWith(sha256Hasher, size1, size2, proof, root1, root2);
}
