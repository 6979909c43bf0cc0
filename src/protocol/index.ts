/**
 * `agent-tally/protocol`: the pure layer. Types, closed vocabularies, the byte
 * rules and pure functions; zero runtime dependencies, no clock, RNG, crypto
 * or I/O (hashers are passed in). tests/protocol/boundary.test.ts enforces it.
 */
export {
  OPEN_ORDINAL,
  FAILURE_CLASSES,
  SESSION_DIAGNOSTICS,
  SESSION_MESSAGE_KINDS,
  SESSION_INTERACTIONS,
  INTERACTION_MESSAGE,
  ENTRY_KINDS,
  SESSION_PHASES,
  isMember,
} from './vocabulary.js';
export type { FailureClass, SessionDiagnostic, SessionMessageKind, SessionInteraction, EntryKind, SessionPhase } from './vocabulary.js';
export { TallyError } from './errors.js';
export { toHex, fromHex, isDigestHex, bytesEqual } from './hex.js';
export { toBase64, fromBase64, fromBase64Ascii } from './base64.js';
export { canonicalJson, canonicalBytes, tryCanonicalJson, utf8, CANONICAL_MAX_DEPTH } from './canonical.js';
export type { CanonicalValue, CanonicalObject, CanonicalProblem, CanonicalOptions } from './canonical.js';
export { parseStrictJson, JSON_MAX_DEPTH, STRICT_JSON_CODES } from './strict-json.js';
export { hasLoneSurrogate } from './unicode.js';
export type { StrictJsonCode, StrictJsonResult, StrictJsonOptions } from './strict-json.js';
export {
  PROTOCOL_VERSION,
  DOMAIN_TAGS,
  LEAF_PREFIX,
  NODE_PREFIX,
  taggedHash,
  entryHash,
  frameRoot,
  frameRootOfDataText,
  authoredHash,
  turnClaimHash,
} from './bytes.js';
export type { Digest, FrameContent } from './bytes.js';
export { BUNDLE_RANGE_MAX, LIMITS } from './limits.js';
export { slotIndex, phaseAfter } from './slots.js';
export { isoTime } from './time.js';
export { parseEntry, checkSpec, checkBody, isOrdinal, isFrameTime, turnClaimOf } from './entries.js';
export type {
  Hex32,
  SessionSpec,
  GenesisEntry,
  FrameEntry,
  TurnEntry,
  FinalizeEntry,
  Entry,
  TurnBody,
  AuthoredBody,
  StandDownBody,
  ParseEntryResult,
} from './entries.js';
export { reconcileTurn, reconcileFrame, phaseGate } from './reconcile.js';
export type { TurnClaim, SlotPrior, FrameClaim, FrameSlotPrior, ReconcileResult, WriteVerb } from './reconcile.js';
export { ChainVerifier, CHAIN_ERROR_CODES } from './chain.js';
export { CHAIN_ERROR_CATALOGUE } from './chain-catalogue.js';
export type { ChainErrorEntry } from './chain-catalogue.js';
export type { ChainError, ChainErrorCode, ChainSummary, VerifiedEntry, ChainPin, FinishOptions } from './chain.js';
export { LineSplitter, splitLines, verifyChunks } from './stream.js';
export type { VerifyChunksOptions } from './stream.js';
export {
  MERKLE_HASH_LENGTH,
  rfc6962Hasher,
  Frontier,
  borderAppend,
  borderRoot,
  MerkleLevels,
  rangeRootFromNodes,
  rootFromNodes,
  inclusionProofFromNodes,
  consistencyProofFromNodes,
  rootFromLeafHashes,
  inclusionProofFromLeafHashes,
  consistencyProofFromLeafHashes,
  inclusionProofLength,
  rootFromInclusionProof,
  verifyInclusion,
  consistencyProofLength,
  rootFromConsistencyProof,
  verifyConsistency,
  MERKLE_FAILURE_CODES,
  isTreeHash,
} from './merkle/index.js';
export type { MerkleHasher, NodeReader, MerkleFailureCode, MerkleFailure, MerkleRootRole, MerkleCheck, MerkleRootResult } from './merkle/index.js';
export {
  engineLogLeafBytes,
  parseEngineLogLeaf,
  specHash,
  LEAF_REFUSAL_CODES,
  TILE_WIDTH,
  TILE_HEIGHT,
  ENTRY_MAX_BYTES,
  tileIndexPath,
  tilePath,
  parseTilePath,
  tilesForSize,
  tileExists,
  tileHashes,
  entryBundle,
  parseEntryBundle,
  logIdentityText,
  parseLogIdentityText,
  logIdentityId,
  checkpointConflict,
  checkpointAgainstTree,
  CheckpointLedger,
  CHECKPOINT_CONFLICT_CODES,
} from './log/index.js';
export type { EngineLogLeaf, OpenLeaf, CheckpointLeaf, LeafRefusalCode, ParseLeafResult, TileRef, LogIdentity, PreviousShard, LogIdentityTextCode, ParseLogIdentityResult, IndexedCheckpointLeaf, CheckpointConflict, CheckpointConflictCode } from './log/index.js';
