/**
 * The RFC 6962 / RFC 9162 §2.1.1 tree hasher: the one place that names the
 * domain-separation prefixes and assembles the bytes hashed for tree nodes.
 *
 * - empty tree   = H('')                       (no prefix, zero bytes)
 * - leaf hash    = H(LEAF_PREFIX ‖ data)        = H(0x00 ‖ data)
 * - interior     = H(NODE_PREFIX ‖ left ‖ right) = H(0x01 ‖ left ‖ right)
 *
 * The digest is passed in; this file does no crypto itself.
 */

/** RFC 6962 leaf-hash prefix byte: `leaf = H(0x00 ‖ data)`. */
export const LEAF_PREFIX = 0x00;

/** RFC 6962 interior-node prefix byte: `node = H(0x01 ‖ left ‖ right)`. */
export const NODE_PREFIX = 0x01;

/** Length in bytes of every tree hash (SHA-256 output). Any other length is rejected. */
export const MERKLE_HASH_LENGTH = 32;

/**
 * The narrow hasher every tree function takes. Implementations MUST be pure
 * and MUST return fresh {@link MERKLE_HASH_LENGTH}-byte arrays.
 */
export interface MerkleHasher {
  /** Root of the empty tree: `H('')`. */
  emptyRoot(): Uint8Array;
  /** Leaf hash: `H(0x00 ‖ data)`. */
  hashLeaf(data: Uint8Array): Uint8Array;
  /** Interior node: `H(0x01 ‖ left ‖ right)`. */
  hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array;
  /**
   * Optional: the same interior node written into `out` (32 bytes), which may
   * be `left` or `right` itself — for a fold that keeps its running hash in one
   * array. Without it, verifiers copy `hashChildren`'s result into `out`.
   */
  hashChildrenInto?(left: Uint8Array, right: Uint8Array, out: Uint8Array): void;
}

/**
 * Builds the RFC 6962 hasher from a raw digest function (SHA-256 in Tally).
 *
 * @example
 * ```ts
 * // `sha256` is any SHA-256 over Uint8Array (the caller's: node:crypto, noble, …)
 * const hasher = rfc6962Hasher(sha256);
 * hasher.hashLeaf(new Uint8Array()); // 6e340b9c…afa01d
 * ```
 */
export function rfc6962Hasher(digest: (data: Uint8Array) => Uint8Array, digestInto?: (data: Uint8Array, out: Uint8Array) => void): MerkleHasher {
  let empty: Uint8Array | undefined;
  const node = new Uint8Array(1 + 2 * MERKLE_HASH_LENGTH);
  node[0] = NODE_PREFIX;
  return {
    emptyRoot(): Uint8Array {
      empty ??= digest(new Uint8Array(0));
      return empty.slice();
    },
    hashLeaf(data: Uint8Array): Uint8Array {
      const buf = new Uint8Array(1 + data.length);
      buf[0] = LEAF_PREFIX;
      buf.set(data, 1);
      return digest(buf);
    },
    hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
      // The common case (two 32-byte hashes) reuses one preimage buffer: the
      // digest must read its input before returning and keep no reference.
      if (left.length === MERKLE_HASH_LENGTH && right.length === MERKLE_HASH_LENGTH) {
        node.set(left, 1);
        node.set(right, 1 + MERKLE_HASH_LENGTH);
        return digest(node);
      }
      const buf = new Uint8Array(1 + left.length + right.length);
      buf[0] = NODE_PREFIX;
      buf.set(left, 1);
      buf.set(right, 1 + left.length);
      return digest(buf);
    },
    hashChildrenInto(left: Uint8Array, right: Uint8Array, out: Uint8Array): void {
      // Both inputs are copied into the preimage before `out` is written.
      if (digestInto !== undefined && left.length === MERKLE_HASH_LENGTH && right.length === MERKLE_HASH_LENGTH) {
        node.set(left, 1);
        node.set(right, 1 + MERKLE_HASH_LENGTH);
        digestInto(node, out);
      } else out.set(this.hashChildren(left, right));
    },
  };
}
