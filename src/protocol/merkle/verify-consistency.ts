/**
 * RFC 9162 §2.1.4.2 consistency-proof verification, in two steps: check the
 * proof against the old root and compute the new root it implies, then
 * compare. Pure; never throws on bad input.
 */
import { bytesEqual } from '../hex.js';
import type { MerkleHasher } from './hasher.js';
import { half, isOdd, isPowerOfTwo, pathSteps } from './numbers.js';
import { checkCount, checkHash, readProof } from './read-input.js';
import { merkleFailure, rootMismatch, type MerkleCheck, type MerkleRootResult } from './result.js';

/**
 * Number of hashes in a consistency proof from `size1` to `size2` leaves.
 * Requires `0 < size1 < size2` (safe integers); equal sizes need 0.
 *
 * @example
 * ```ts
 * consistencyProofLength(6, 8); // 3
 * ```
 */
export function consistencyProofLength(size1: number, size2: number): number {
  if (size1 === size2) return 0;
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (isOdd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  // The seed, unless it is root1 itself, then the path from it to the root.
  return (isPowerOfTwo(size1) ? 0 : 1) + pathSteps(fn, sn);
}

/**
 * Checks `proof` against the old tree (`size1` leaves, root `root1`) and
 * returns the root of the `size2`-leaf tree it implies (RFC 9162 §2.1.4.2).
 * Requires `0 < size1 <= size2`, or `size1 == size2 == 0` with `root1 = H('')`;
 * equal sizes need an empty proof and imply `root1`. A proof that does not
 * reproduce `root1` is a `root-mismatch` with `which: 'root1'`.
 *
 * @example
 * ```ts
 * const r = rootFromConsistencyProof(hasher, 6, 8, proof, root6);
 * if (r.ok) compare(r.root, root8);
 * ```
 */
export function rootFromConsistencyProof(
  hasher: MerkleHasher,
  size1: number,
  size2: number,
  proof: readonly Uint8Array[],
  root1: Uint8Array,
): MerkleRootResult {
  const bad = checkCount(size1, 'size1') ?? checkCount(size2, 'size2') ?? checkHash(root1, 'root1');
  if (bad !== undefined) return bad;
  if (size1 > size2) return merkleFailure('size-order', `size1 ${size1} is greater than size2 ${size2}`);
  const read = readProof(proof);
  if (!read.ok) return read;
  const items = read.items;
  if (size1 === size2) {
    if (items.length !== 0) return merkleFailure('empty-proof-expected', `sizes are equal but the proof has ${items.length} hashes`);
    if (size1 === 0) {
      const empty = hasher.emptyRoot();
      if (!bytesEqual(root1, empty)) return rootMismatch('root1', empty, root1);
    }
    return { ok: true, root: root1.slice() };
  }
  if (size1 === 0) return merkleFailure('empty-tree-consistency', 'a consistency proof from the empty tree is not defined');
  const want = consistencyProofLength(size1, size2);
  if (items.length !== want) {
    return merkleFailure('wrong-proof-size', `proof has ${items.length} hashes, ${size1} -> ${size2} needs ${want}`);
  }
  // Step 2: when size1 is a power of two the old root is the seed, else the proof's first hash is.
  const path = isPowerOfTwo(size1) ? [root1, ...items] : items;
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (isOdd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0] as Uint8Array;
  let sr = fr;
  for (let i = 1; i < path.length; i++) {
    const c = path[i] as Uint8Array;
    if (isOdd(fn) || fn === sn) {
      fr = hasher.hashChildren(c, fr);
      sr = hasher.hashChildren(c, sr);
      while (fn !== 0 && !isOdd(fn)) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = hasher.hashChildren(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  if (!bytesEqual(fr, root1)) return rootMismatch('root1', fr, root1);
  return { ok: true, root: sr.slice() };
}

/**
 * Verifies that the tree of `size2` leaves with root `root2` extends the tree
 * of `size1` leaves with root `root1` (RFC 9162 §2.1.4.2). Requires
 * `0 < size1 <= size2` (or both 0 with both roots `H('')`); every hash must be
 * 32 bytes. A mismatch says which root failed and carries both values in hex.
 *
 * @example
 * ```ts
 * const v = verifyConsistency(hasher, 6, 8, proof, root6, root8);
 * if (!v.ok) report(v.code, v.message);
 * ```
 */
export function verifyConsistency(
  hasher: MerkleHasher,
  size1: number,
  size2: number,
  proof: readonly Uint8Array[],
  root1: Uint8Array,
  root2: Uint8Array,
): MerkleCheck {
  const bad = checkHash(root2, 'root2');
  if (bad !== undefined) return bad;
  const r = rootFromConsistencyProof(hasher, size1, size2, proof, root1);
  if (!r.ok) return r;
  return bytesEqual(r.root, root2) ? { ok: true } : rootMismatch('root2', r.root, root2);
}
