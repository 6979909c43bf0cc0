/**
 * RFC 9162 §2.1 written plainly, by recursion over a leaf-hash array. These
 * are O(n) per call and exist as the independent reference that
 * {@link MerkleLevels} is checked against, and for one-shot use over a
 * small array. They throw `TallyError` on misuse (bad hash, bad range).
 */
import { assertCountInRange, assertTreeHash } from './guards.js';
import type { MerkleHasher } from './hasher.js';
import { splitPoint } from './numbers.js';

/** MTH(D[start:end]) — RFC 9162 §2.1.1. */
function mth(hasher: MerkleHasher, leaves: readonly Uint8Array[], start: number, end: number): Uint8Array {
  const n = end - start;
  if (n === 0) return hasher.emptyRoot();
  if (n === 1) return (leaves[start] as Uint8Array).slice();
  const k = splitPoint(n);
  return hasher.hashChildren(mth(hasher, leaves, start, start + k), mth(hasher, leaves, start + k, end));
}

/** PATH(m, D[start:end]) — RFC 9162 §2.1.3.1. */
function path(hasher: MerkleHasher, leaves: readonly Uint8Array[], m: number, start: number, end: number): Uint8Array[] {
  const n = end - start;
  if (n === 1) return [];
  const k = splitPoint(n);
  if (m < k) return [...path(hasher, leaves, m, start, start + k), mth(hasher, leaves, start + k, end)];
  return [...path(hasher, leaves, m - k, start + k, end), mth(hasher, leaves, start, start + k)];
}

/** SUBPROOF(m, D[start:end], b) — RFC 9162 §2.1.4.1. */
function subproof(hasher: MerkleHasher, leaves: readonly Uint8Array[], m: number, start: number, end: number, b: boolean): Uint8Array[] {
  const n = end - start;
  if (m === n) return b ? [] : [mth(hasher, leaves, start, end)];
  const k = splitPoint(n);
  if (m <= k) return [...subproof(hasher, leaves, m, start, start + k, b), mth(hasher, leaves, start + k, end)];
  return [...subproof(hasher, leaves, m - k, start + k, end, false), mth(hasher, leaves, start, start + k)];
}

function checkLeaves(leafHashes: readonly Uint8Array[]): void {
  for (let i = 0; i < leafHashes.length; i++) assertTreeHash(leafHashes[i], `leafHashes[${i}]`);
}

/**
 * Merkle Tree Hash of all of `leafHashes` (RFC 9162 §2.1.1); the empty array gives `H('')`.
 *
 * @example
 * ```ts
 * rootFromLeafHashes(hasher, [hasher.hashLeaf(new Uint8Array())]); // equals that leaf hash
 * ```
 */
export function rootFromLeafHashes(hasher: MerkleHasher, leafHashes: readonly Uint8Array[]): Uint8Array {
  checkLeaves(leafHashes);
  return mth(hasher, leafHashes, 0, leafHashes.length);
}

/**
 * Inclusion proof PATH(index, D[0:size]) (RFC 9162 §2.1.3.1), siblings ordered
 * from the leaf upwards. Requires `0 <= index < size <= leafHashes.length`.
 *
 * @example
 * ```ts
 * inclusionProofFromLeafHashes(hasher, leaves, 2, 5); // 3 hashes
 * ```
 */
export function inclusionProofFromLeafHashes(
  hasher: MerkleHasher,
  leafHashes: readonly Uint8Array[],
  index: number,
  size: number = leafHashes.length,
): Uint8Array[] {
  checkLeaves(leafHashes);
  assertCountInRange(size, 1, leafHashes.length, 'size');
  assertCountInRange(index, 0, size - 1, 'index');
  return path(hasher, leafHashes, index, 0, size);
}

/**
 * Consistency proof PROOF(size1, D[0:size2]) (RFC 9162 §2.1.4.1). Requires
 * `0 < size1 <= size2 <= leafHashes.length`, or `size1 == size2 == 0`; equal
 * sizes give the empty proof.
 *
 * @example
 * ```ts
 * consistencyProofFromLeafHashes(hasher, leaves, 6, 8); // 3 hashes
 * ```
 */
export function consistencyProofFromLeafHashes(
  hasher: MerkleHasher,
  leafHashes: readonly Uint8Array[],
  size1: number,
  size2: number = leafHashes.length,
): Uint8Array[] {
  checkLeaves(leafHashes);
  assertCountInRange(size2, 0, leafHashes.length, 'size2');
  assertCountInRange(size1, size2 === 0 ? 0 : 1, size2, 'size1');
  return subproof(hasher, leafHashes, size1, 0, size2, true);
}
