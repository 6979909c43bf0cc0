import {
  TallyError,
  bytesEqual,
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

/** Options of {@link PackedMerkleTree}. */
export interface PackedMerkleTreeOptions {
  /**
   * Lowest level kept for the whole tree (default 0: every node). With
   * `floor` k > 0 only nodes of level >= k (subtrees of 2^k leaves and up:
   * 64 / 2^k bytes per leaf) and the levels below k of the last, incomplete
   * chunk of 2^k leaves are kept; a node below k in a complete chunk is read
   * from a chunk loaded with {@link PackedMerkleTree.loadChunk}, and reading
   * one that is not loaded throws a {@link ChunkNeededError} naming the chunk.
   */
  readonly floor?: number;
  /** Loaded chunks kept, 3 to 1024 (least recently used dropped first; default 8). */
  readonly chunks?: number;
}

/**
 * Thrown by a floored {@link PackedMerkleTree} when a node below its floor
 * lies in a chunk that is not loaded: load the chunk's 2^floor leaf hashes
 * with `loadChunk(chunk, leaves)` and ask again (`SessionTrees.read` does).
 */
export class ChunkNeededError extends TallyError {
  constructor(readonly chunk: number) {
    super('TALLY_MERKLE_CHUNK_NEEDED', 'A node below the tree\'s floor is in a chunk that is not loaded.', { details: `chunk ${chunk}` });
    this.name = 'ChunkNeededError';
  }
}

/**
 * Every perfect-subtree hash of an append-only RFC 6962 tree, packed: level
 * `h` is one growable byte array holding its nodes back to back, so the
 * whole tree costs about 64 bytes per leaf (a leaf hash, plus on average one
 * interior hash) instead of two heap objects per node — or, with a `floor`
 * k, about 64 / 2^k bytes per leaf plus the chunks loaded on demand. It is a
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
  readonly #floor: number;
  readonly #maxChunks: number;
  readonly #levels: Uint8Array[] = [new Uint8Array(HASH * 64)];
  /** Nodes per level, all of them (the logical count). */
  readonly #counts: number[] = [0];
  /** Per level below the floor: nodes dropped from the array (those of complete chunks). */
  readonly #base: number[] = [0];
  readonly #chunks = new Map<number, Uint8Array[]>();

  constructor(hasher: MerkleHasher, options: PackedMerkleTreeOptions = {}) {
    this.#hasher = hasher;
    const floor = options.floor ?? 0;
    checkCount(floor, 0, 20, 'floor');
    this.#floor = floor;
    const chunks = options.chunks ?? 8;
    checkCount(chunks, 3, 1024, 'chunks'); // one root or proof needs at most 2 loaded chunks (plus the kept last one)
    this.#maxChunks = chunks;
  }

  /** Number of leaves. */
  get size(): number {
    return this.#counts[0]!;
  }

  /** The lowest level kept for the whole tree (chunks of `2^floor` leaves below it). */
  get floor(): number {
    return this.#floor;
  }

  /** Appends one 32-byte leaf hash and stores the perfect subtrees it completes. */
  append(leafHash: Uint8Array): void {
    if (!(leafHash instanceof Uint8Array) || leafHash.length !== HASH) {
      throw new TallyError('TALLY_MERKLE_BAD_HASH', `leafHash must be a ${HASH}-byte Uint8Array.`);
    }
    this.#push(0, leafHash);
    for (let h = 0; (this.#counts[h]! & 1) === 0; h++) {
      const n = this.#counts[h]! - this.#base[h]!;
      const row = this.#levels[h]!;
      const parent = this.#hasher.hashChildren(row.subarray((n - 2) * HASH, (n - 1) * HASH), row.subarray((n - 1) * HASH, n * HASH));
      this.#push(h + 1, parent);
    }
    const size = this.size;
    if (this.#floor > 0 && size % 2 ** this.#floor === 0) {
      // A chunk is complete: its nodes below the floor are dropped (its root is kept at the floor).
      for (let h = 0; h < this.#floor; h++) this.#base[h] = this.#counts[h]!;
    }
  }

  #push(level: number, hash: Uint8Array): void {
    if (this.#levels[level] === undefined) {
      this.#levels[level] = new Uint8Array(HASH * 64);
      this.#counts[level] = 0;
      this.#base[level] = 0;
    }
    let row = this.#levels[level]!;
    const n = this.#counts[level]! - this.#base[level]!;
    if ((n + 1) * HASH > row.length) {
      const grown = new Uint8Array(row.length * 2);
      grown.set(row);
      this.#levels[level] = row = grown;
    }
    row.set(hash, n * HASH);
    this.#counts[level] = this.#counts[level]! + 1;
  }

  /**
   * The stored root of the perfect subtree `[index·2^level, (index+1)·2^level)`
   * (a view: do not modify it); throws `TALLY_MERKLE_OUT_OF_RANGE` if it is not
   * complete, and {@link ChunkNeededError} if it lies below the floor in a chunk
   * that is not loaded.
   */
  node(level: number, index: number): Uint8Array {
    const count = this.#counts[level];
    if (count === undefined || !Number.isSafeInteger(index) || index < 0 || index >= count) {
      throw new TallyError('TALLY_MERKLE_OUT_OF_RANGE', 'No such complete subtree.', { details: `level ${describeValue(level)}, index ${describeValue(index)}, tree size ${this.size}` });
    }
    const base = this.#base[level]!;
    if (index >= base) return this.#levels[level]!.subarray((index - base) * HASH, (index - base + 1) * HASH);
    const per = 2 ** (this.#floor - level);
    const chunk = Math.floor(index / per);
    const loaded = this.#chunks.get(chunk);
    if (!loaded) throw new ChunkNeededError(chunk);
    this.#chunks.delete(chunk);
    this.#chunks.set(chunk, loaded); // most recently used last
    const at = index - chunk * per;
    return loaded[level]!.subarray(at * HASH, (at + 1) * HASH);
  }

  /**
   * Loads chunk `chunk` (leaves `[chunk·2^floor, (chunk+1)·2^floor)`) of a
   * floored tree from its leaf hashes; they must hash to the chunk root the
   * tree kept (`TALLY_MERKLE_CHUNK_MISMATCH` otherwise: the leaves are not the
   * ones the tree was built from).
   */
  loadChunk(chunk: number, leaves: readonly Uint8Array[]): void {
    const width = 2 ** this.#floor;
    checkCount(chunk, 0, Math.floor(this.size / width) - 1, 'chunk');
    if (leaves.length !== width || leaves.some((l) => !(l instanceof Uint8Array) || l.length !== HASH)) {
      throw new TallyError('TALLY_MERKLE_BAD_HASH', `a chunk is ${width} leaf hashes of ${HASH} bytes.`);
    }
    const levels: Uint8Array[] = [];
    let row = new Uint8Array(width * HASH);
    leaves.forEach((l, i) => row.set(l, i * HASH));
    for (let h = 0; h < this.#floor; h++) {
      levels.push(row);
      const n = row.length / HASH / 2;
      const up = new Uint8Array(n * HASH);
      for (let i = 0; i < n; i++) up.set(this.#hasher.hashChildren(row.subarray(2 * i * HASH, (2 * i + 1) * HASH), row.subarray((2 * i + 1) * HASH, (2 * i + 2) * HASH)), i * HASH);
      row = up;
    }
    const kept = this.node(this.#floor, chunk);
    if (!bytesEqual(row, kept)) {
      throw new TallyError('TALLY_MERKLE_CHUNK_MISMATCH', 'The leaves do not hash to the chunk root the tree was built with.', { details: `chunk ${chunk}` });
    }
    this.#chunks.delete(chunk);
    this.#chunks.set(chunk, levels);
    while (this.#chunks.size > this.#maxChunks) this.#chunks.delete(this.#chunks.keys().next().value!);
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

  /** Bytes held by the packed levels and the loaded chunks (capacity, not just use). */
  get byteLength(): number {
    let chunks = 0;
    for (const c of this.#chunks.values()) chunks += c.reduce((a, l) => a + l.length, 0);
    return this.#levels.reduce((a, l) => a + l.length, 0) + chunks;
  }
}
