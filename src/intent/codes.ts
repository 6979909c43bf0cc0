/**
 * The closed vocabulary of Intent rulings: the six validation stages (in their
 * normative order) and every rejection code, each tied to exactly one stage.
 *
 * The tuples and the unions are tied both ways at compile time: adding a stage
 * or code to one without the other breaks the build.
 */

/** A validation stage of {@link validateIntent}, in normative order a → f. */
export type IntentStage = 'schema' | 'signature' | 'nonce' | 'ttl' | 'bounds' | 'target';

/** Which stage each rejection code belongs to (the single source of the pairing). */
export interface IntentCodeStages {
  invalid_schema: 'schema';
  unknown_signer: 'signature';
  bad_signature: 'signature';
  replayed_nonce: 'nonce';
  expired: 'ttl';
  ttl_too_far: 'ttl';
  nonpositive_size: 'bounds';
  nonpositive_leverage: 'bounds';
  slippage_out_of_range: 'bounds';
  nonpositive_tp: 'bounds';
  nonpositive_sl: 'bounds';
  magnitude_exceeded: 'bounds';
  scale_exceeded: 'bounds';
  target_only_on_transfer: 'target';
  target_required_on_transfer: 'target';
}

/** A rejection code of {@link validateIntent}. */
export type IntentCode = keyof IntentCodeStages;

/** The stage a given code belongs to. */
export type IntentStageOf<C extends IntentCode> = IntentCodeStages[C];

/**
 * Every stage, in the order `validateIntent` runs them (a schema, b signature,
 * c nonce, d ttl, e bounds, f target).
 */
export const INTENT_STAGES = Object.freeze(['schema', 'signature', 'nonce', 'ttl', 'bounds', 'target'] as const satisfies readonly IntentStage[]);

/** Every rejection code, grouped by stage in stage order. */
export const INTENT_CODES = Object.freeze([
  'invalid_schema',
  'unknown_signer',
  'bad_signature',
  'replayed_nonce',
  'expired',
  'ttl_too_far',
  'nonpositive_size',
  'nonpositive_leverage',
  'slippage_out_of_range',
  'nonpositive_tp',
  'nonpositive_sl',
  'magnitude_exceeded',
  'scale_exceeded',
  'target_only_on_transfer',
  'target_required_on_transfer',
] as const satisfies readonly IntentCode[]);

// Exhaustiveness, the other direction: a union member missing from its tuple fails to compile.
true satisfies [Exclude<IntentStage, (typeof INTENT_STAGES)[number]>] extends [never] ? true : false;
true satisfies [Exclude<IntentCode, (typeof INTENT_CODES)[number]>] extends [never] ? true : false;
// Every code maps to a real stage, and every stage has at least one code.
true satisfies IntentCodeStages extends Record<IntentCode, IntentStage> ? true : false;
true satisfies [Exclude<IntentStage, IntentCodeStages[IntentCode]>] extends [never] ? true : false;

/**
 * Runtime lookup of the stage of every code (exactly the pairing of {@link IntentCodeStages}).
 *
 * @example
 * INTENT_CODE_STAGE.replayed_nonce; // 'nonce'
 */
export const INTENT_CODE_STAGE = Object.freeze({
  invalid_schema: 'schema',
  unknown_signer: 'signature',
  bad_signature: 'signature',
  replayed_nonce: 'nonce',
  expired: 'ttl',
  ttl_too_far: 'ttl',
  nonpositive_size: 'bounds',
  nonpositive_leverage: 'bounds',
  slippage_out_of_range: 'bounds',
  nonpositive_tp: 'bounds',
  nonpositive_sl: 'bounds',
  magnitude_exceeded: 'bounds',
  scale_exceeded: 'bounds',
  target_only_on_transfer: 'target',
  target_required_on_transfer: 'target',
} as const satisfies { readonly [C in IntentCode]: IntentCodeStages[C] });
