/** C2SP tlog-cosignature/v1 (Ed25519, type 0x04): keys, lines, verification. */
export { ALG_COSIGNATURE_V1, COSIGNATURE_HEADER, TIMESTAMPED_SIGNATURE_BYTES, MAX_COSIGNATURE_TIME, cosignedMessage, cosignerKeyId, timestampedSignature } from './bytes.js';
export { cosignerKeyFrom, formatCosignerVerifierKey, parseCosignerVerifierKey } from './key.js';
export type { CosignerKey, CosignerVerifier, ParseCosignerVerifierKeyResult } from './key.js';
export { cosignatureLine, addSignatureLines, splitSignatureLines, isSignatureLine, verifyCosignatures } from './cosign.js';
export type { VerifiedCosignature, VerifyCosignaturesResult } from './cosign.js';
