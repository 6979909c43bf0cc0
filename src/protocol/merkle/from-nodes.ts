/**
 * Roots and proofs computed from stored perfect-subtree nodes: O(log n)
 * node reads and at most O(log n) hashes per call (only the ephemeral nodes
 * on the right border are hashed), never a rebuild. These trust their
 * arguments; callers check ranges first (as {@link MerkleLevels} does).
 */
import { TallyError } from '../errors.js';
import type { MerkleHasher } from './hasher.js';
import type { NodeReader } from './node-reader.js';
import { bitLength, splitPoint } from './numbers.js';

/**
 * Hash of the RFC 9162 subtree over leaves `[start, end)`, `start < end`,
 * which must be a node of the tree (start a multiple of the smallest power of
 * two ≥ end − start). It is the right fold of the perfect subtrees that the
 * binary digits of `end − start` cut the range into, largest first.
 *
 * @example
 * ```ts
 * rangeRootFromNodes(hasher, levels, 4, 7); // H(0x01 ‖ node(1,2) ‖ node(0,6))
 * ```
 */
export function rangeRootFromNodes(hasher: MerkleHasher, reader: NodeReader, start: number, end: number): Uint8Array {
  const parts: Uint8Array[] = [];
  let pos = start;
  let rest = end - start;
  for (let level = bitLength(rest) - 1; level >= 0; level--) {
    const width = 2 ** level;
    if (rest < width) continue;
    if (pos % width !== 0) {
      throw new TallyError('TALLY_MERKLE_INTERNAL', 'Range is not a node of the tree.', { details: `[${start}, ${end})` });
    }
    parts.push(reader.node(level, pos / width));
    pos += width;
    rest -= width;
  }
  let acc = parts[parts.length - 1] as Uint8Array;
  for (let i = parts.length - 2; i >= 0; i--) acc = hasher.hashChildren(parts[i] as Uint8Array, acc);
  return acc.slice();
}

/** MTH(D[0:size]) from stored nodes; `H('')` for size 0. Requires the store to cover `size` leaves. */
export function rootFromNodes(hasher: MerkleHasher, reader: NodeReader, size: number): Uint8Array {
  return size === 0 ? hasher.emptyRoot() : rangeRootFromNodes(hasher, reader, 0, size);
}

/**
 * PATH(index, D[0:size]) (RFC 9162 §2.1.3.1) from stored nodes, siblings
 * from the leaf upwards. Requires `0 <= index < size` and the store to cover `size` leaves.
 */
export function inclusionProofFromNodes(hasher: MerkleHasher, reader: NodeReader, index: number, size: number): Uint8Array[] {
  const topDown: Uint8Array[] = [];
  let start = 0;
  let n = size;
  let m = index;
  while (n > 1) {
    const k = splitPoint(n);
    if (m < k) {
      topDown.push(rangeRootFromNodes(hasher, reader, start + k, start + n));
      n = k;
    } else {
      topDown.push(rangeRootFromNodes(hasher, reader, start, start + k));
      start += k;
      m -= k;
      n -= k;
    }
  }
  return topDown.reverse();
}

/**
 * PROOF(size1, D[0:size2]) (RFC 9162 §2.1.4.1) from stored nodes. Requires
 * `0 < size1 <= size2` (or both 0) and the store to cover `size2` leaves;
 * equal sizes give the empty proof.
 */
export function consistencyProofFromNodes(hasher: MerkleHasher, reader: NodeReader, size1: number, size2: number): Uint8Array[] {
  const topDown: Uint8Array[] = [];
  let start = 0;
  let n = size2;
  let m = size1;
  let knownToVerifier = true; // RFC's `b`: this node is the whole old tree, whose root the verifier has
  while (m !== n) {
    const k = splitPoint(n);
    if (m <= k) {
      topDown.push(rangeRootFromNodes(hasher, reader, start + k, start + n));
      n = k;
    } else {
      topDown.push(rangeRootFromNodes(hasher, reader, start, start + k));
      start += k;
      m -= k;
      n -= k;
      knownToVerifier = false;
    }
  }
  if (!knownToVerifier) topDown.push(rangeRootFromNodes(hasher, reader, start, start + n));
  return topDown.reverse();
}
