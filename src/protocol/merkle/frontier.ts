import { TallyError } from '../errors.js';
import { assertTreeHash, isTreeHash } from './guards.js';
import type { MerkleHasher } from './hasher.js';
import { half, isOdd, isTreeCount, popcount } from './numbers.js';

/**
 * The compact range `[0, size)`: the roots of the perfect subtrees on the
 * tree's right border, largest (leftmost) first — one per set bit of `size`,
 * so O(log n) state. Appending hashes only the subtrees it completes
 * (amortised one hash per append); the tree is never recomputed.
 *
 * @example
 * ```ts
 * const f = new Frontier(hasher);
 * f.append(hasher.hashLeaf(data));
 * const saved = { size: f.size, hashes: f.hashes() };
 * const again = Frontier.fromHashes(hasher, saved.size, saved.hashes);
 * ```
 */
export class Frontier {
  readonly #hasher: MerkleHasher;
  #hashes: Uint8Array[];
  #size: number;
  /** 32-byte arrays no border root uses any more, reused by {@link Frontier.append}. */
  readonly #spare: Uint8Array[] = [];

  /** An empty frontier (size 0). */
  constructor(hasher: MerkleHasher) {
    this.#hasher = hasher;
    this.#hashes = [];
    this.#size = 0;
  }

  /**
   * Restores a frontier from persisted state. Throws
   * `TALLY_MERKLE_FRONTIER_MALFORMED` unless `size` is a non-negative safe
   * integer and `hashes` holds exactly `popcount(size)` 32-byte hashes.
   *
   * @example
   * ```ts
   * const f = Frontier.fromHashes(hasher, 3, [rootOf01, leaf2]);
   * ```
   */
  static fromHashes(hasher: MerkleHasher, size: number, hashes: readonly Uint8Array[]): Frontier {
    if (!isTreeCount(size)) {
      throw new TallyError('TALLY_MERKLE_FRONTIER_MALFORMED', 'Frontier size must be a non-negative safe integer.', {
        details: `got ${String(size)}`,
      });
    }
    if (!Array.isArray(hashes) || hashes.length !== popcount(size)) {
      throw new TallyError('TALLY_MERKLE_FRONTIER_MALFORMED', 'Frontier hash count must equal popcount(size).', {
        details: `size ${size} needs ${popcount(size)} hashes, got ${Array.isArray(hashes) ? hashes.length : typeof hashes}`,
      });
    }
    const f = new Frontier(hasher);
    for (let i = 0; i < hashes.length; i++) {
      const h: unknown = hashes[i];
      if (!isTreeHash(h)) {
        throw new TallyError('TALLY_MERKLE_FRONTIER_MALFORMED', 'Frontier hashes must be 32-byte Uint8Arrays.', {
          details: `hashes[${i}] is not`,
        });
      }
      f.#hashes.push(h.slice());
    }
    f.#size = size;
    return f;
  }

  /** Number of leaves appended so far. */
  get size(): number {
    return this.#size;
  }

  /**
   * Appends one leaf hash (a 32-byte `H(0x00 ‖ data)`), merging the perfect
   * subtrees it completes. Throws `TALLY_MERKLE_BAD_HASH` on a wrong-length hash.
   */
  append(leafHash: Uint8Array): void {
    if (this.#size >= Number.MAX_SAFE_INTEGER) {
      throw new TallyError('TALLY_MERKLE_OUT_OF_RANGE', 'Frontier is full.', { details: `size ${this.#size}` });
    }
    assertTreeHash(leafHash, 'leafHash');
    // The frontier owns its arrays (hashes() and fromHashes() copy), so the
    // merge runs in place: the leaf is copied into a spare array, each merge
    // writes into it, and the arrays it absorbs become spares.
    const carry = this.#spare.pop() ?? new Uint8Array(32);
    carry.set(leafHash);
    mergeInto(this.#hasher, this.#size, this.#hashes, carry, this.#spare);
    this.#size += 1;
  }

  /**
   * Appends the root of a perfect subtree of `2^height` leaves (computed
   * elsewhere, for example by a verification worker), as if its leaves had
   * been appended one by one: the border then holds the same roots. Requires
   * `size` to be a multiple of `2^height` (the subtree starts on its own
   * boundary); throws `TALLY_MERKLE_OUT_OF_RANGE` otherwise, and
   * `TALLY_MERKLE_BAD_HASH` on a wrong-length root.
   */
  appendSubtree(root: Uint8Array, height: number): void {
    const width = 2 ** height;
    if (!Number.isSafeInteger(height) || height < 0 || height > 52 || this.#size % width !== 0 || this.#size + width > Number.MAX_SAFE_INTEGER) {
      throw new TallyError('TALLY_MERKLE_OUT_OF_RANGE', 'A subtree must start on its own boundary.', { details: `size ${this.#size}, height ${String(height)}` });
    }
    assertTreeHash(root, 'root');
    const carry = this.#spare.pop() ?? new Uint8Array(32);
    carry.set(root);
    // Below `height` every bit of size is 0: the merge is the leaf merge on size / 2^height.
    mergeInto(this.#hasher, this.#size / width, this.#hashes, carry, this.#spare);
    this.#size += width;
  }

  /** Merkle Tree Hash of the `size` leaves: the border roots folded right to left; `H('')` when empty. */
  root(): Uint8Array {
    return borderRoot(this.#hasher, this.#hashes);
  }

  /** Copies of the border roots, largest subtree first (what {@link Frontier.fromHashes} takes back). */
  hashes(): Uint8Array[] {
    return this.#hashes.map((h) => h.slice());
  }

  /** An independent copy of this frontier. */
  clone(): Frontier {
    return Frontier.fromHashes(this.#hasher, this.#size, this.#hashes);
  }
}

/**
 * The border roots after appending one leaf hash to a border of `size` leaves
 * (largest subtree first). Pure: `roots` is not modified, and the roots the
 * leaf does not complete are shared, not copied — so an immutable holder of a
 * border (the session state) can extend it without copying hashes. Throws
 * `TALLY_MERKLE_BAD_HASH` on a wrong-length leaf hash.
 */
export function borderAppend(hasher: MerkleHasher, size: number, roots: readonly Uint8Array[], leafHash: Uint8Array): Uint8Array[] {
  assertTreeHash(leafHash, 'leafHash');
  const next = roots.slice();
  mergeInto(hasher, size, next, leafHash.slice());
  return next;
}

/**
 * The one merge rule: each trailing 1 bit of `size` is a perfect subtree that
 * the new leaf completes, so `carry` (the leaf hash, overwritten) absorbs the
 * last root once per such bit, and is pushed. The absorbed roots are not
 * written; they go to `spare` when given.
 */
function mergeInto(hasher: MerkleHasher, size: number, roots: Uint8Array[], carry: Uint8Array, spare?: Uint8Array[]): void {
  for (let s = size; isOdd(s); s = half(s)) {
    const left = roots.pop() as Uint8Array;
    if (hasher.hashChildrenInto !== undefined) hasher.hashChildrenInto(left, carry, carry);
    else carry.set(hasher.hashChildren(left, carry));
    spare?.push(left);
  }
  roots.push(carry);
}

/** Merkle Tree Hash from border roots (largest first): folded right to left; `H('')` when empty. Returns a fresh array. */
export function borderRoot(hasher: MerkleHasher, roots: readonly Uint8Array[]): Uint8Array {
  if (roots.length === 0) return hasher.emptyRoot();
  let acc: Uint8Array = (roots[roots.length - 1] as Uint8Array).slice();
  for (let i = roots.length - 2; i >= 0; i--) acc = hasher.hashChildren(roots[i] as Uint8Array, acc);
  return acc;
}
