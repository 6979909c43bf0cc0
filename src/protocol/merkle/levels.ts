import { TallyError } from '../errors.js';
import { assertCountInRange, assertTreeHash } from './guards.js';
import type { MerkleHasher } from './hasher.js';
import type { NodeReader } from './node-reader.js';
import { consistencyProofFromNodes, inclusionProofFromNodes, rootFromNodes } from './from-nodes.js';

/**
 * Append-only store of every perfect-subtree hash: `levels[h][i]` is the root
 * of leaves `[i·2^h, (i+1)·2^h)`. An append stores the leaf and hashes each
 * subtree it completes (amortised one hash per append). Roots and proofs for
 * any size up to the current one are then O(log n) reads and hashes.
 *
 * In memory for now; it implements {@link NodeReader}, and the proof code
 * lives in `from-nodes.ts`, so a persistent node store can reuse it.
 *
 * @example
 * ```ts
 * const tree = new MerkleLevels(hasher);
 * for (const d of data) tree.append(hasher.hashLeaf(d));
 * const proof = tree.inclusionProof(2, 5);
 * verifyInclusion(hasher, 2, 5, tree.leafHash(2), proof, tree.root(5)); // { ok: true }
 * ```
 */
export class MerkleLevels implements NodeReader {
  readonly #hasher: MerkleHasher;
  readonly #levels: Uint8Array[][] = [[]];
  /** Reader over the stored arrays without defensive copies (results are copied on the way out). */
  readonly #reader: NodeReader = { node: (level, index) => this.#stored(level, index) };

  /** An empty tree. */
  constructor(hasher: MerkleHasher) {
    this.#hasher = hasher;
  }

  /** Number of leaves appended so far. */
  get size(): number {
    return (this.#levels[0] as Uint8Array[]).length;
  }

  /**
   * Appends one 32-byte leaf hash (`H(0x00 ‖ data)`) and stores the perfect
   * subtrees it completes. Throws `TALLY_MERKLE_BAD_HASH` on a wrong-length hash.
   */
  append(leafHash: Uint8Array): void {
    assertTreeHash(leafHash, 'leafHash');
    const levels = this.#levels;
    (levels[0] as Uint8Array[]).push(leafHash.slice());
    for (let h = 0; ; h++) {
      const row = levels[h] as Uint8Array[];
      if (row.length % 2 !== 0) break;
      const parent = this.#hasher.hashChildren(row[row.length - 2] as Uint8Array, row[row.length - 1] as Uint8Array);
      let up = levels[h + 1];
      if (up === undefined) {
        up = [];
        levels.push(up);
      }
      up.push(parent);
    }
  }

  /** Copy of the leaf hash at `index`; requires `0 <= index < size`. */
  leafHash(index: number): Uint8Array {
    assertCountInRange(index, 0, this.size - 1, 'index');
    return (this.#levels[0] as Uint8Array[])[index]!.slice();
  }

  /**
   * Copy of the perfect-subtree root `[index·2^level, (index+1)·2^level)`;
   * throws `TALLY_MERKLE_OUT_OF_RANGE` if that subtree is not complete yet.
   */
  node(level: number, index: number): Uint8Array {
    return this.#stored(level, index).slice();
  }

  /** Merkle Tree Hash of the first `size` leaves (default: all); requires `0 <= size <= this.size`. */
  root(size: number = this.size): Uint8Array {
    assertCountInRange(size, 0, this.size, 'size');
    return rootFromNodes(this.#hasher, this.#reader, size);
  }

  /**
   * Inclusion proof for leaf `index` in the tree of the first `size` leaves
   * (default: all), siblings from the leaf upwards; requires `0 <= index < size <= this.size`.
   */
  inclusionProof(index: number, size: number = this.size): Uint8Array[] {
    assertCountInRange(size, 1, this.size, 'size');
    assertCountInRange(index, 0, size - 1, 'index');
    return inclusionProofFromNodes(this.#hasher, this.#reader, index, size);
  }

  /**
   * Consistency proof from the tree of `size1` leaves to the tree of `size2`
   * (default: all); requires `0 < size1 <= size2 <= this.size` or both 0.
   */
  consistencyProof(size1: number, size2: number = this.size): Uint8Array[] {
    assertCountInRange(size2, 0, this.size, 'size2');
    assertCountInRange(size1, size2 === 0 ? 0 : 1, size2, 'size1');
    return consistencyProofFromNodes(this.#hasher, this.#reader, size1, size2);
  }

  #stored(level: number, index: number): Uint8Array {
    const h = this.#levels[level]?.[index];
    if (h === undefined) {
      throw new TallyError('TALLY_MERKLE_OUT_OF_RANGE', 'No such complete subtree.', {
        details: `level ${String(level)}, index ${String(index)}, tree size ${this.size}`,
      });
    }
    return h;
  }
}
