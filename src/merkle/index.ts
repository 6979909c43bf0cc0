/**
 * `agent-tally/merkle`: RFC 6962 / RFC 9162 Merkle trees over SHA-256.
 * Leaf `SHA-256(0x00 ‖ data)`, node `SHA-256(0x01 ‖ left ‖ right)`, empty
 * tree `SHA-256('')`; proofs are arrays of 32-byte hashes, leaf upwards.
 */
export { sha256Hasher, leafHash } from './hasher.js';
export { rootHash, inclusionProof, consistencyProof } from './tree.js';
export { verifyInclusion, verifyConsistency } from './verify.js';
export { createFrontier, createMerkleLevels } from './create.js';
export type { FrontierState } from './create.js';
export type {
  Frontier,
  MerkleLevels,
  MerkleHasher,
  NodeReader,
  MerkleCheck,
  MerkleFailure,
  MerkleFailureCode,
  MerkleRootRole,
} from '../protocol/merkle/index.js';
