/**
 * RFC 6962 / RFC 9162 Merkle trees, generic over the hash function. Pure:
 * imports nothing outside `src/protocol`.
 */
export { LEAF_PREFIX, NODE_PREFIX, MERKLE_HASH_LENGTH, rfc6962Hasher } from './hasher.js';
export type { MerkleHasher } from './hasher.js';
export { Frontier, borderAppend, borderRoot } from './frontier.js';
export { MerkleLevels } from './levels.js';
export type { NodeReader } from './node-reader.js';
export { rangeRootFromNodes, rootFromNodes, inclusionProofFromNodes, consistencyProofFromNodes } from './from-nodes.js';
export { rootFromLeafHashes, inclusionProofFromLeafHashes, consistencyProofFromLeafHashes } from './reference.js';
export { inclusionProofLength, rootFromInclusionProof, verifyInclusion } from './verify-inclusion.js';
export { consistencyProofLength, rootFromConsistencyProof, verifyConsistency } from './verify-consistency.js';
export { MERKLE_FAILURE_CODES } from './result.js';
export type { MerkleFailureCode, MerkleFailure, MerkleRootRole, MerkleCheck, MerkleRootResult } from './result.js';
export { isTreeHash } from './guards.js';
