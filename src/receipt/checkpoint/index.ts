/** C2SP tlog-checkpoints and tlog-proof files. */
export type { Checkpoint, CheckpointInput, CheckpointCode, ParseCheckpointResult } from './checkpoint.js';
export { formatCheckpoint, parseCheckpoint, CHECKPOINT_CODES, ROOT_HASH_BYTES } from './checkpoint.js';
export { checkpointOrigin, isValidOrigin } from './origin.js';
export type { TlogProof, TlogProofCode, ParseTlogProofResult } from './tlogProof.js';
export { formatTlogProof, parseTlogProof, TLOG_PROOF_CODES, TLOG_PROOF_HEADER, MAX_PROOF_HASHES, PROOF_HASH_BYTES } from './tlogProof.js';
export type { VerifyTlogProofParameters, VerifyTlogProofResult, VerifyTlogProofStage } from './verifyTlogProof.js';
export { verifyTlogProof } from './verifyTlogProof.js';
