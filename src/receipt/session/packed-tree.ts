import {
  TallyError,
  consistencyProofFromNodes,
  inclusionProofFromNodes,
  rootFromNodes,
  type MerkleHasher,
  type NodeReader,
} from '../../protocol/index.js';
import { describeValue } from '../bytes.js';

const HASH = 32;

function outOfRange(what: string, n: unknown, min: number, max: number): TallyError {
  return new TallyError('TALLY_MERKLE_OUT_OF_RANGE', `${what} is out of range.`, { details: `requires an integer in [${min}, ${max}], got ${describeValue(n)}` });
}

function checkCount(n: unknown, min: number, max: number, what: string): asserts n is number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min || n > max) throw outOfRange(what, n, min, max);
}

/**
 * Every perfect-subtree hash of an append-only RFC 6962 tree, packed: level
 * `h` is one growable byte array holding its nodes back to back, so the
 * whole tree costs about 64 bytes per leaf (a leaf hash, plus on average one
 * interior hash) instead of two heap objects per node. It is a
 * {@link NodeReader}, so roots and proofs come from the protocol layer's
 * `*FromNodes` functions: O(log n) node reads and at most O(log n) hashes
 * each, never a rebuild. An append hashes, amortised, one interior node.
 *
 * @example
 * const t = new PackedMerkleTree(receiptHasher);
 * for (const line of lines) t.append(entryLeafHash(line));
 * t.inclusionProof(4, t.size);
 */
export class PackedMerkleTree implements NodeReader {
  readonly #hasher: MerkleHasher;
  readonly #levels: Uint8Array[] = [new Uint8Array(HASH * 64)];
  readonly #counts: number[] = [0];

  constructor(hasher: MerkleHasher) {
    this.#hasher = hasher;
  }

  /** Number of leaves. */
  get size(): number {
    return this.#counts[0]!;
  }

  /** Appends one 32-byte leaf hash and stores the perfect subtrees it completes. */
  append(leafHash: Uint8Array): void {
    if (!(leafHash instanceof Uint8Array) || leafHash.length !== HASH) {
      throw new TallyError('TALLY_MERKLE_BAD_HASH', `leafHash must be a ${HASH}-byte Uint8Array.`);
    }
    this.#push(0, leafHash);
    for (let h = 0; (this.#counts[h]! & 1) === 0; h++) {
      const n = this.#counts[h]!;
      const row = this.#levels[h]!;
      const parent = this.#hasher.hashChildren(row.subarray((n - 2) * HASH, (n - 1) * HASH), row.subarray((n - 1) * HASH, n * HASH));
      this.#push(h + 1, parent);
    }
  }

  #push(level: number, hash: Uint8Array): void {
    if (this.#levels[level] === undefined) {
      this.#levels[level] = new Uint8Array(HASH * 64);
      this.#counts[level] = 0;
    }
    let row = this.#levels[level]!;
    const n = this.#counts[level]!;
    if ((n + 1) * HASH > row.length) {
      const grown = new Uint8Array(row.length * 2);
      grown.set(row);
      this.#levels[level] = row = grown;
    }
    row.set(hash, n * HASH);
    this.#counts[level] = n + 1;
  }

  /**
   * The stored root of the perfect subtree `[index·2^level, (index+1)·2^level)`
   * (a view: do not modify it); throws `TALLY_MERKLE_OUT_OF_RANGE` if it is not complete.
   */
  node(level: number, index: number): Uint8Array {
    const count = this.#counts[level];
    if (count === undefined || !Number.isSafeInteger(index) || index < 0 || index >= count) {
      throw new TallyError('TALLY_MERKLE_OUT_OF_RANGE', 'No such complete subtree.', { details: `level ${describeValue(level)}, index ${describeValue(index)}, tree size ${this.size}` });
    }
    return this.#levels[level]!.subarray(index * HASH, (index + 1) * HASH);
  }

  /** Copy of the leaf hash at `index`; requires `0 <= index < size`. */
  leafHash(index: number): Uint8Array {
    checkCount(index, 0, this.size - 1, 'index');
    return this.node(0, index).slice();
  }

  /** Root of the first `size` leaves (default: all); requires `0 <= size <= this.size`. */
  root(size: number = this.size): Uint8Array {
    checkCount(size, 0, this.size, 'size');
    return rootFromNodes(this.#hasher, this, size);
  }

  /** Inclusion proof of leaf `index` in the tree of the first `size` leaves; requires `0 <= index < size <= this.size`. */
  inclusionProof(index: number, size: number = this.size): Uint8Array[] {
    checkCount(size, 1, this.size, 'size');
    checkCount(index, 0, size - 1, 'index');
    return inclusionProofFromNodes(this.#hasher, this, index, size);
  }

  /** Consistency proof from `size1` to `size2` leaves; requires `0 < size1 <= size2 <= this.size`. */
  consistencyProof(size1: number, size2: number = this.size): Uint8Array[] {
    checkCount(size2, 1, this.size, 'size2');
    checkCount(size1, 1, size2, 'size1');
    return consistencyProofFromNodes(this.#hasher, this, size1, size2);
  }

  /** Bytes held by the packed levels (capacity, not just use). */
  get byteLength(): number {
    return this.#levels.reduce((a, l) => a + l.length, 0);
  }
}
