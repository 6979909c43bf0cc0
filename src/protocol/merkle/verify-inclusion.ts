/**
 * RFC 9162 §2.1.3.2 inclusion-proof verification, in two steps: compute the
 * root the proof implies, then compare. Pure; never throws on bad input.
 */
import { bytesEqual } from '../hex.js';
import { MERKLE_HASH_LENGTH, type MerkleHasher } from './hasher.js';
import { half, isOdd, pathSteps } from './numbers.js';
import { checkCount, checkHash, readProof } from './read-input.js';
import { merkleFailure, rootMismatch, type MerkleCheck, type MerkleRootResult } from './result.js';

/**
 * Number of hashes in an inclusion proof for leaf `index` in a tree of `size`
 * leaves. Requires `0 <= index < size` (safe integers).
 *
 * @example
 * ```ts
 * inclusionProofLength(6, 8); // 3
 * ```
 */
export function inclusionProofLength(index: number, size: number): number {
  return pathSteps(index, size - 1);
}

/**
 * The root implied by `proof` for leaf `index` (hash `leafHash`) in a tree of
 * `size` leaves (RFC 9162 §2.1.3.2 steps 1–4). Requires `0 <= index < size`;
 * violations, non-32-byte hashes and a proof of the wrong length are returned
 * as failures.
 *
 * @example
 * ```ts
 * const r = rootFromInclusionProof(hasher, 2, 5, leaf2, proof);
 * if (r.ok) publish(r.root);
 * ```
 */
export function rootFromInclusionProof(
  hasher: MerkleHasher,
  index: number,
  size: number,
  leafHash: Uint8Array,
  proof: readonly Uint8Array[],
): MerkleRootResult {
  const bad = checkCount(index, 'index') ?? checkCount(size, 'size') ?? checkHash(leafHash, 'leafHash');
  if (bad !== undefined) return bad;
  if (index >= size) return merkleFailure('index-out-of-range', `index ${index} is not below size ${size}`);
  const read = readProof(proof);
  if (!read.ok) return read;
  const want = inclusionProofLength(index, size);
  if (read.items.length !== want) {
    return merkleFailure('wrong-proof-size', `proof has ${read.items.length} hashes, index ${index} in size ${size} needs ${want}`);
  }
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  // The running hash lives in one array (no fresh array per level).
  const acc = new Uint8Array(MERKLE_HASH_LENGTH);
  for (const p of read.items) {
    if (isOdd(fn) || fn === sn) {
      hashChildrenInto(hasher, p, r, acc);
      while (fn !== 0 && !isOdd(fn)) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      hashChildrenInto(hasher, r, p, acc);
    }
    r = acc;
    fn = half(fn);
    sn = half(sn);
  }
  return { ok: true, root: r.slice() };
}

/** `H(0x01 ‖ left ‖ right)` into `out` (which may be `left` or `right`), through the hasher's own `hashChildrenInto` when it has one. */
function hashChildrenInto(hasher: MerkleHasher, left: Uint8Array, right: Uint8Array, out: Uint8Array): void {
  if (hasher.hashChildrenInto !== undefined) hasher.hashChildrenInto(left, right, out);
  else out.set(hasher.hashChildren(left, right));
}

/**
 * Verifies that `leafHash` is leaf `index` of the tree of `size` leaves whose
 * root is `root` (RFC 9162 §2.1.3.2). Requires `0 <= index < size`; every
 * hash must be 32 bytes. A mismatch carries both roots in hex.
 *
 * @example
 * ```ts
 * const v = verifyInclusion(hasher, 2, 5, leaf2, proof, root5);
 * if (!v.ok) report(v.code, v.message);
 * ```
 */
export function verifyInclusion(
  hasher: MerkleHasher,
  index: number,
  size: number,
  leafHash: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): MerkleCheck {
  const bad = checkHash(root, 'root');
  if (bad !== undefined) return bad;
  const r = rootFromInclusionProof(hasher, index, size, leafHash, proof);
  if (!r.ok) return r;
  return bytesEqual(r.root, root) ? { ok: true } : rootMismatch('root', r.root, root);
}
