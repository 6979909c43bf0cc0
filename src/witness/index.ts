/**
 * `agent-tally/witness`: witnesses for Tally checkpoints, in the C2SP formats.
 * C2SP tlog-cosignature/v1 (Ed25519, type 0x04) keys and lines; a witness
 * that cosigns a checkpoint only when it is consistent with everything it
 * cosigned before (C2SP tlog-witness), with durable state; policies (k of n)
 * graders apply. The bytes are specified in docs/PROTOCOL.md §12.
 *
 * @example
 * import { cosignerKeyFrom, verifyCosignatures } from 'agent-tally/witness';
 */

// Cosignatures.
export { ALG_COSIGNATURE_V1, COSIGNATURE_HEADER, TIMESTAMPED_SIGNATURE_BYTES, MAX_COSIGNATURE_TIME, cosignedMessage, cosignerKeyId, timestampedSignature } from './cosignature/index.js';
export { cosignerKeyFrom, formatCosignerVerifierKey, parseCosignerVerifierKey } from './cosignature/index.js';
export type { CosignerKey, CosignerVerifier, ParseCosignerVerifierKeyResult } from './cosignature/index.js';
export { cosignatureLine, addSignatureLines, splitSignatureLines, isSignatureLine, verifyCosignatures } from './cosignature/index.js';
export type { VerifiedCosignature, VerifyCosignaturesResult } from './cosignature/index.js';

// The witness and its state.
export { createWitness, logKeyCovers, ADD_CHECKPOINT_CODES, MAX_ADD_CHECKPOINT_PROOF_LINES } from './witness.js';
export type { Witness, WitnessOptions, AddCheckpointResult, AddCheckpointCode } from './witness.js';
export type { WitnessStore, WitnessRecord, WitnessHead } from './state/types.js';
export { MemoryWitnessStore } from './state/memory.js';
export { SqliteWitnessStore, WITNESS_SQLITE_SCHEMA } from './state/sqlite.js';
export { PostgresWitnessStore } from './state/postgres.js';
export type { PostgresWitnessStoreOptions } from './state/postgres.js';
export { openWitnessStore } from './state/open.js';

// HTTP (C2SP tlog-witness).
export { createWitnessHttpServer, TLOG_SIZE_CONTENT_TYPE, MAX_ADD_CHECKPOINT_BYTES } from './http.js';
export type { WitnessHttpOptions } from './http.js';
export { submitCheckpoint } from './client.js';
export type { SubmitResult, SubmitOptions } from './client.js';

// Policies graders apply.
export { parseWitnessPolicy, quorumPolicy } from './policy/parse.js';
export type { ParsePolicyResult } from './policy/parse.js';
export { checkWitnessPolicy } from './policy/check.js';
export type { CheckWitnessPolicyResult } from './policy/check.js';
export type { WitnessPolicy, PolicyWitness, QuorumRule } from './policy/types.js';
export { verifyWitnessedTurnReceipt, verifyWitnessedBundleCheckpoint, verifyWitnessedLogBinding } from './policy/verify.js';
export type { WitnessStageFailure } from './policy/verify.js';

// Monitoring.
export { monitorCheckpoints } from './monitor.js';
export type { MonitorOptions, MonitorResult, MonitorRound, MonitorSource, Equivocation } from './monitor.js';

// Witnesses cosign the engine log.
export { LogCosigner } from './log-cosign.js';
export type { LogCosignerOptions, LogCosignRound, RateBudget } from './log-cosign.js';

// The engine asks witnesses.
export { createWitnessedNotary } from './engine.js';
export type { WitnessedNotary, WitnessedNotaryOptions, WitnessedSealResult, EngineWitness, WitnessOutcome, CosignReport } from './engine.js';
export { WITNESS_CONFLICT_CODE, WitnessWatch, witnessConflictError, type WitnessConflict, type WitnessHolds, type ConflictListener } from './conflict.js';
