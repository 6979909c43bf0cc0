/**
 * Reads untrusted verifier input into plain values, turning every defect into
 * a {@link MerkleFailure} instead of an exception.
 */
import { isBytes, isTreeHash } from './guards.js';
import { MERKLE_HASH_LENGTH } from './hasher.js';
import { isTreeCount } from './numbers.js';
import { merkleFailure, type MerkleFailure } from './result.js';

/** Longest proof any safe-integer tree can need (inclusion ≤ 53, consistency ≤ 54); longer is rejected unread. */
const MAX_PROOF_ELEMENTS = 128;

/** A failure unless `n` is a non-negative safe integer. */
export function checkCount(n: unknown, what: string): MerkleFailure | undefined {
  return isTreeCount(n) ? undefined : merkleFailure('invalid-number', `${what} must be a non-negative safe integer`);
}

/** A failure unless `h` is a 32-byte `Uint8Array`. */
export function checkHash(h: unknown, what: string): MerkleFailure | undefined {
  if (isTreeHash(h)) return undefined;
  const got = isBytes(h) ? `${h.length} bytes` : 'not a Uint8Array';
  return merkleFailure('bad-hash-length', `${what} must be ${MERKLE_HASH_LENGTH} bytes (got ${got})`);
}

/** Copies `proof` into a fresh array of 32-byte hashes, or explains why it cannot. */
export function readProof(proof: unknown): { ok: true; items: Uint8Array[] } | MerkleFailure {
  try {
    if (!Array.isArray(proof)) return merkleFailure('malformed-proof', 'proof must be an array of hashes');
    const len: unknown = proof.length;
    if (typeof len !== 'number' || len > MAX_PROOF_ELEMENTS) {
      return merkleFailure('wrong-proof-size', `proof has ${String(len)} elements, more than any tree needs`);
    }
    const items: Uint8Array[] = [];
    for (let i = 0; i < len; i++) {
      const h: unknown = proof[i];
      // The name is only built for a bad hash (this loop runs for every proof a verifier reads).
      if (!isTreeHash(h)) return checkHash(h, `proof[${i}]`)!;
      items.push(h);
    }
    return { ok: true, items };
  } catch {
    return merkleFailure('malformed-proof', 'proof could not be read');
  }
}
