/**
 * `agent-tally/intent` — the signed-Intent contract: the only thing that
 * crosses from an agent's untrusted reasoning into execution. Schema and wire
 * JSON Schema, canonical payload and intent hash, EIP-191 signing and
 * recovery, the staged validator, the nonce seam and the ruling catalogue.
 */
export { INTENT_RULING_CATALOGUE } from './catalogue.js';
export type { IntentRulingEntry } from './catalogue.js';
export { canonicalPayload, eip191Digest, hashCanonicalPayload, intentHash, EIP191_PREFIX } from './canonical.js';
export { INTENT_CODES, INTENT_CODE_STAGE, INTENT_STAGES } from './codes.js';
export type { IntentCode, IntentCodeStages, IntentStage, IntentStageOf } from './codes.js';
export {
  DECIMAL_LITERAL_PATTERN,
  MAX_CANONICAL_FRACTION_DIGITS,
  MAX_CANONICAL_INTEGER_DIGITS,
  MAX_DECIMAL_EXPONENT,
  MAX_DECIMAL_LITERAL_LENGTH,
  canonicalDecimal,
} from './decimal.js';
export type { CanonicalDecimalResult } from './decimal.js';
export { MAX_TOKEN_LENGTH } from './fields.js';
export { intentJsonSchema, unsignedIntentJsonSchema } from './json-schema.js';
export type { JsonSchemaDocument } from './json-schema.js';
export { createNonceGuard } from './nonce-guard.js';
export type { NonceGuard, NonceLookup, NonceReservation } from './nonce-guard.js';
export { INTENT_ACTIONS, intentSchema, unsignedIntentSchema } from './schema.js';
export type { Intent, IntentAction, IntentInput, UnsignedIntent, UnsignedIntentInput } from './schema.js';
export { signIntent } from './sign.js';
export type { IntentSigner } from './sign.js';
export { createSignerCache } from './signer-cache.js';
export type { SignerCache, SignerCacheOptions } from './signer-cache.js';
export { normalizeTtl } from './ttl.js';
export type { NormalizedTtlResult } from './ttl.js';
export { DEFAULT_INTENT_LIMITS, validateIntent } from './validate.js';
export type { IntentAcceptance, IntentLimits, IntentRejection, ValidateIntentOptions, ValidateIntentResult } from './validate.js';
export { recoverIntentSigner, verifyIntentSignature } from './verify.js';
export type { VerifyIntentSignatureOptions } from './verify.js';
export { createIntentPool } from './pool.js';
export type { IntentPool, IntentPoolOptions, PooledValidation } from './pool.js';
export { carriedIntent } from './carried.js';
