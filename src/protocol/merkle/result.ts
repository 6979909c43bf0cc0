/**
 * Outcomes of proof verification. Verifiers never throw on bad input: every
 * rejection is one of these closed codes.
 */
import { toHex } from '../hex.js';

/** Every reason a proof can be rejected. Closed: new codes are a protocol change. */
export const MERKLE_FAILURE_CODES = [
  /** A size or index is not a non-negative safe integer. */
  'invalid-number',
  /** Inclusion: `index >= size`. */
  'index-out-of-range',
  /** Consistency: `size1 > size2`. */
  'size-order',
  /** Consistency: `size1 == 0 < size2` (RFC 9162 defines proofs only for `0 < size1`). */
  'empty-tree-consistency',
  /** The proof is not an array (or could not be read). */
  'malformed-proof',
  /** A leaf hash, root or proof element is not a 32-byte `Uint8Array`. */
  'bad-hash-length',
  /** The proof has a different number of elements than the sizes require. */
  'wrong-proof-size',
  /** Consistency with `size1 == size2`: the proof must be empty. */
  'empty-proof-expected',
  /** The root computed from the proof differs from the expected one. */
  'root-mismatch',
] as const;

/** One of {@link MERKLE_FAILURE_CODES}. */
export type MerkleFailureCode = (typeof MERKLE_FAILURE_CODES)[number];

/** Which supplied root a `root-mismatch` is about. */
export type MerkleRootRole = 'root' | 'root1' | 'root2';

/** A rejected proof. A `root-mismatch` carries both roots in lowercase hex. */
export type MerkleFailure =
  | { readonly ok: false; readonly code: Exclude<MerkleFailureCode, 'root-mismatch'>; readonly message: string }
  | {
      readonly ok: false;
      readonly code: 'root-mismatch';
      readonly message: string;
      readonly which: MerkleRootRole;
      readonly computedHex: string;
      readonly expectedHex: string;
    };

/** Outcome of `verifyInclusion` / `verifyConsistency`. */
export type MerkleCheck = { readonly ok: true } | MerkleFailure;

/** Outcome of `rootFromInclusionProof` / `rootFromConsistencyProof`: the root the proof implies. */
export type MerkleRootResult = { readonly ok: true; readonly root: Uint8Array } | MerkleFailure;

/** Builds a failure other than `root-mismatch`. */
export function merkleFailure(code: Exclude<MerkleFailureCode, 'root-mismatch'>, message: string): MerkleFailure {
  return { ok: false, code, message };
}

/** Builds a `root-mismatch` failure carrying both roots in hex. */
export function rootMismatch(which: MerkleRootRole, computed: Uint8Array, expected: Uint8Array): MerkleFailure {
  const computedHex = toHex(computed);
  const expectedHex = toHex(expected);
  return {
    ok: false,
    code: 'root-mismatch',
    message: `computed ${which} ${computedHex} does not match expected ${expectedHex}`,
    which,
    computedHex,
    expectedHex,
  };
}
