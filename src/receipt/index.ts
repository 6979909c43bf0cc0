/**
 * `agent-tally/receipt`: receipts graders can verify with nothing but files
 * and a public key. C2SP signed notes and Ed25519 engine keys; session
 * checkpoints in the C2SP tlog-checkpoint format, signed by the engine's
 * notary only from its own store and only through the signing log (never two
 * inconsistent checkpoints); inclusion and consistency proofs; single-turn receipts (a C2SP
 * tlog-proof carrying the entry's bytes); deterministic replay of every
 * ruling; certified grades. The bytes are specified in docs/PROTOCOL.md §11.
 *
 * @example
 * import { createNotary, loadEngineKey, verifyTurnReceipt } from 'agent-tally/receipt';
 * const notary = createNotary({ key: await loadEngineKey() });
 * const sealed = await notary.sealWithReceipt(engine, sessionId);
 */

// C2SP signed notes.
export { OPEN_NOTE_CODES, VERIFIER_KEY_CODES } from './note/index.js';
export type {
  NoteSigner,
  NoteVerifier,
  NoteSignature,
  OpenNoteCode,
  OpenNoteResult,
  VerifierKeyCode,
  ParsedVerifierKey,
  ParseVerifierKeyResult,
} from './note/index.js';
export { keyId, formatVerifierKey, parseVerifierKey, signNote, assertNoteText, openNote, openPinnedNote, decodeVerifierKey, isValidKeyName, encodeBase64, decodeBase64Strict } from './note/index.js';
export type { DecodedVerifierKey, DecodeVerifierKeyResult } from './note/index.js';
export { ALG_ED25519, MAX_SIGNATURES, PRIVATE_KEY_PREFIX, SIGNATURE_LINE_PREFIX, formatKeyId } from './note/index.js';

// Engine keys.
export type { EngineKey } from './keys/index.js';
export { generateEngineKey, engineKeyFromPrivateKey, parsePrivateKey, formatPrivateKey, loadEngineKeyFile, loadOrCreateEngineKey, KEY_FILE_MODE, KEY_DIR_MODE } from './keys/index.js';
export { DEFAULT_KEY_PATH, KEY_ENV_VAR, ENGINE_NAME_ENV_VAR, DEFAULT_ENGINE_NAME, engineKeyPath, configuredEngineName, loadEngineKey, resolveVerifierKeys } from './config.js';
export type { LoadEngineKeyOptions } from './config.js';

// C2SP tlog-checkpoint and tlog-proof.
export type { Checkpoint, CheckpointInput, CheckpointCode, ParseCheckpointResult } from './checkpoint/index.js';
export { formatCheckpoint, parseCheckpoint, CHECKPOINT_CODES, ROOT_HASH_BYTES } from './checkpoint/index.js';
export { checkpointOrigin, isValidOrigin } from './checkpoint/index.js';
export type { TlogProof, TlogProofCode, ParseTlogProofResult } from './checkpoint/index.js';
export { formatTlogProof, parseTlogProof, TLOG_PROOF_CODES, TLOG_PROOF_HEADER, MAX_PROOF_HASHES, PROOF_HASH_BYTES } from './checkpoint/index.js';
export type { VerifyTlogProofParameters, VerifyTlogProofResult, VerifyTlogProofStage } from './checkpoint/index.js';
export { verifyTlogProof } from './checkpoint/index.js';

// The receipt layer's bytes.
export { GRADE_HEADER, MAX_GRADE_PAYLOAD_BYTES, GRADE_TEXT_CODES, entryLeafHash, sessionCheckpointText, splitSessionOrigin, formatGradeText, parseGradeText } from './bytes.js';
export type { GradeStatement, GradeTextCode, ParseGradeTextResult } from './bytes.js';

// Session checkpoints: the notary, its trees, opening a checkpoint.
export { createNotary, NOTARY_CODES } from './session/notary.js';
export type {
  Notary,
  NotaryOptions,
  NotaryEngine,
  NotaryCode,
  NotaryRejection,
  IssuedCheckpoint,
  IssueCheckpointResult,
  SealWithReceiptResult,
  InclusionProofResult,
  ConsistencyProofResult,
  TurnReceiptResult,
  TurnReceiptOptions,
} from './session/notary.js';
export { SessionTrees, receiptHasher } from './session/trees.js';
export { SigningLog, SigningRefusedError, SIGN_REFUSAL_CODES } from './signing/log.js';
export { ContinuityRefusedError, TIMELINE_CHANGED_CODE, judgeContinuity } from './signing/continuity.js';
export type { ContinuityVerdict, ContinuityProof } from './signing/continuity.js';
export type { SignRefusalCode, SigningLogOptions, SigningLogResult, SigningLogRefusal, CheckpointToSign, ConsistencySource } from './signing/log.js';
export { PackedMerkleTree, ChunkNeededError } from './session/packed-tree.js';
export type { PackedMerkleTreeOptions } from './session/packed-tree.js';
export type { SessionTreesOptions } from './session/trees.js';
export { openSessionCheckpoint, sessionCheckpointFromNote } from './session/open-checkpoint.js';
export type { SessionCheckpoint, OpenSessionCheckpointResult, OpenSessionCheckpointFailure } from './session/open-checkpoint.js';

// Proofs: single-turn receipts, consistency, bundles.
export { formatTurnReceipt, verifyTurnReceipt, pinMismatch } from './proof/turn-receipt.js';
export type { TurnReceiptInput, ReceiptPin, VerifyTurnReceiptOptions, VerifyTurnReceiptResult } from './proof/turn-receipt.js';
export { checkEntryBytes, ENTRY_CHECK_CODES } from './proof/entry-check.js';
export type { EntryCheckCode, CheckEntryResult } from './proof/entry-check.js';
export { formatConsistencyProof, parseConsistencyProof, verifyCheckpointConsistency } from './proof/consistency.js';
export type { ConsistencyProof, ParseConsistencyProofResult, VerifyConsistencyResult } from './proof/consistency.js';
export { bundleFileChunks, streamVerifiedEntries, indexBundle, verifyBundleCheckpoint } from './proof/bundle.js';
export type { IndexBundleOptions } from './proof/bundle.js';
export { verifyChunksAgainstCheckpoint } from './proof/bundle-checkpoint.js';
export type { CheckpointMatchResult, CheckpointMatchOptions } from './proof/bundle-checkpoint.js';
export type { BundleChunks, StreamOptions, IndexedBundle, VerifyBundleCheckpointResult } from './proof/bundle.js';
export { peekSessionCheckpoint, turnReceiptFromBundle } from './proof/prove-bundle.js';
export type { TurnReceiptFromBundleResult } from './proof/prove-bundle.js';

// Replay.
export { intentExternalNonceFact, replayInMemory, replayInto } from './replay/replay.js';
export { replay } from './replay/replay-disk.js';
export { replayFile } from './replay/replay-file.js';
export type { ReplayOptions, ReplayResult, ReplayDivergence, ReplayDivergenceKind, ExternalFact } from './replay/types.js';
export { changeLine, changeValueText, fieldChanges, FIELD_CHANGES_MAX, type FieldChange } from './replay/diff.js';
export { externalFactText } from './replay/fact-text.js';

// Certified grades.
export { signGrade, verifyGrade, verifyGradeForBundle, gradeBundle } from './grade/grade.js';
export type { GradedTranscript, VerifyGradeResult } from './grade/grade.js';
