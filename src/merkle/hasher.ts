import { sha256 } from '@noble/hashes/sha2.js';
import { TallyError } from '../protocol/errors.js';
import { rfc6962Hasher, type MerkleHasher } from '../protocol/merkle/index.js';

/**
 * The RFC 6962 SHA-256 tree hasher: empty root `SHA-256('')`, leaf
 * `SHA-256(0x00 ‖ data)`, node `SHA-256(0x01 ‖ left ‖ right)`.
 *
 * @example
 * ```ts
 * toHex(sha256Hasher.emptyRoot()); // 'e3b0c442…b855'
 * ```
 */
export const sha256Hasher: MerkleHasher = rfc6962Hasher(sha256);

/**
 * RFC 6962 leaf hash `SHA-256(0x00 ‖ data)`. Throws `TALLY_MERKLE_NOT_BYTES`
 * unless `data` is a `Uint8Array`.
 *
 * @example
 * ```ts
 * // printf '\x00' | sha256sum
 * toHex(leafHash(new Uint8Array())); // '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d'
 * ```
 */
export function leafHash(data: Uint8Array): Uint8Array {
  if (!(ArrayBuffer.isView(data) && data instanceof Uint8Array)) {
    throw new TallyError('TALLY_MERKLE_NOT_BYTES', 'Leaf data must be a Uint8Array.', { details: `got ${typeof data}` });
  }
  return sha256Hasher.hashLeaf(data);
}
