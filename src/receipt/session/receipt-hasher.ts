import { sha256, sha256Into } from '../../codec/sha256.js';
import { rfc6962Hasher, type MerkleHasher } from '../../protocol/index.js';

/**
 * The RFC 6962 hasher over node:crypto SHA-256 that every receipt tree uses
 * (in the page, codec/sha256.ts resolves to its browser twin). Its own file so
 * the receipt check (proof/turn-receipt-check.ts) loads no store code.
 */
export const receiptHasher: MerkleHasher = rfc6962Hasher(sha256, sha256Into);
