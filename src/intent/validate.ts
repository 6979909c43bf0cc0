/**
 * `validateIntent`: the referee's admission check of one signed Intent, running
 * the normative stages a schema → b signature → c nonce → d ttl → e bounds →
 * f target, and stopping at the first failure so an earlier failure always
 * masks a later one (the reported reason is stable and later checks cannot be
 * probed by satisfying earlier ones).
 *
 * Pure: no wall clock (the caller passes `now`), no I/O except the injected
 * `resolveSigner` / `isNonceUsed`. It never throws on any `input`; it throws a
 * `TallyError` only for invalid options or a failing callback (I/O).
 */
import { TallyError } from '../protocol/errors.js';
import { checksumAddress, lowerAddress } from './address.js';
import { canonicalPayloadOf, hashCanonicalPayload } from './canonical.js';
import { checkSignature } from './check-signature.js';
import { INTENT_CODE_STAGE } from './codes.js';
import type { IntentCode, IntentCodeStages } from './codes.js';
import { MAX_CANONICAL_FRACTION_DIGITS, MAX_CANONICAL_INTEGER_DIGITS, decimalShape, isUnitInterval } from './decimal.js';
import { describeFirstIssue } from './issues.js';
import type { NonceLookup } from './nonce-guard.js';
import { intentSchema } from './schema.js';
import { RefusedIntentJson } from './carried.js';
import type { Intent } from './schema.js';
import type { SignerCache } from './signer-cache.js';
import { intentEndMs, ttlToMs } from './ttl.js';

/** Magnitude/scale policy for numerics, checked on the decimal string (stage e). */
export interface IntentLimits {
  /** Most digits before the point (`"0.5"` has 0). Default 18, at most 80. */
  readonly maxIntegerDigits?: number;
  /** Most digits after the point. Default 18, at most 80. */
  readonly maxFractionDigits?: number;
}

/** Defaults of {@link IntentLimits}. */
export const DEFAULT_INTENT_LIMITS = Object.freeze({ maxIntegerDigits: 18, maxFractionDigits: 18 });

/** The seams and policy `validateIntent` runs with. */
export interface ValidateIntentOptions {
  /** The address authorized to sign for `agentId`, or null when none is (→ `unknown_signer`). */
  resolveSigner(agentId: string): string | null | undefined | Promise<string | null | undefined>;
  /** Whether `(agentId, nonce)` was already used; may name the first user's intent_hash. */
  isNonceUsed(agentId: string, nonce: string): NonceLookup | Promise<NonceLookup>;
  /** The current (frame) time in epoch ms. Required: the validator never reads the wall clock. */
  readonly now: number;
  /** Tolerated clock difference in ms, applied to both ttl checks. Default 0. */
  readonly clockSkewMs?: number;
  /** Furthest accepted ttl ahead of `now`, in ms. Default: no horizon. */
  readonly maxTtlHorizonMs?: number;
  /** Magnitude/scale limits of numerics. */
  readonly limits?: IntentLimits;
  /** Signer key cache for the fast signature path (see `createSignerCache`). */
  readonly signerCache?: SignerCache;
}

/** An accepted Intent: normalized, authentic, fresh and within bounds. */
export interface IntentAcceptance {
  readonly ok: true;
  /** The normalized Intent (every value a canonical string). */
  readonly intent: Intent;
  /** `keccak256(utf8(canonical payload))`, 0x-hex. */
  readonly intent_hash: string;
  /** EIP-55 address of the verified signer. */
  readonly signer: string;
}

/** A rejected Intent: the first failing stage and its code. */
export type IntentRejection = {
  readonly [C in IntentCode]: {
    readonly ok: false;
    readonly stage: IntentCodeStages[C];
    readonly code: C;
    /** Human explanation, at most ~200 characters. */
    readonly message: string;
    /** Present from stage b on (the input parsed, so it has a hash). */
    readonly intent_hash?: string;
    /** On `replayed_nonce`, the intent_hash of the first user when the nonce store knows it. */
    readonly usedBy?: string;
  };
}[IntentCode];

/** Result of {@link validateIntent}. */
export type ValidateIntentResult = IntentAcceptance | IntentRejection;

function reject(code: IntentCode, message: string, intentHash?: string, usedBy?: string): IntentRejection {
  const base = { ok: false as const, stage: INTENT_CODE_STAGE[code], code, message };
  const withHash = intentHash === undefined ? base : { ...base, intent_hash: intentHash };
  return (usedBy === undefined ? withHash : { ...withHash, usedBy }) as IntentRejection;
}

interface CheckedOptions {
  readonly now: number;
  readonly skew: number;
  readonly horizon: number | undefined;
  readonly maxIntegerDigits: number;
  readonly maxFractionDigits: number;
}

function misuse(what: string, got: unknown): never {
  throw new TallyError('TALLY_INTENT_OPTIONS_INVALID', `validateIntent: ${what}.`, { details: `got ${typeof got === 'number' ? String(got) : typeof got}` });
}

function checkOptions(opts: ValidateIntentOptions): CheckedOptions {
  if (typeof opts !== 'object' || opts === null) misuse('options are required', opts);
  if (typeof opts.resolveSigner !== 'function') misuse('resolveSigner must be a function', opts.resolveSigner);
  if (typeof opts.isNonceUsed !== 'function') misuse('isNonceUsed must be a function', opts.isNonceUsed);
  if (typeof opts.now !== 'number' || !Number.isFinite(opts.now)) misuse('now (epoch ms) must be a finite number', opts.now);
  const skew = opts.clockSkewMs ?? 0;
  if (!Number.isSafeInteger(skew) || skew < 0) misuse('clockSkewMs must be a non-negative integer', skew);
  const horizon = opts.maxTtlHorizonMs;
  if (horizon !== undefined && (!Number.isSafeInteger(horizon) || horizon < 0)) misuse('maxTtlHorizonMs must be a non-negative integer', horizon);
  const maxIntegerDigits = opts.limits?.maxIntegerDigits ?? DEFAULT_INTENT_LIMITS.maxIntegerDigits;
  const maxFractionDigits = opts.limits?.maxFractionDigits ?? DEFAULT_INTENT_LIMITS.maxFractionDigits;
  if (!Number.isSafeInteger(maxIntegerDigits) || maxIntegerDigits < 0 || maxIntegerDigits > MAX_CANONICAL_INTEGER_DIGITS) {
    misuse(`limits.maxIntegerDigits must be an integer in [0, ${MAX_CANONICAL_INTEGER_DIGITS}]`, maxIntegerDigits);
  }
  if (!Number.isSafeInteger(maxFractionDigits) || maxFractionDigits < 0 || maxFractionDigits > MAX_CANONICAL_FRACTION_DIGITS) {
    misuse(`limits.maxFractionDigits must be an integer in [0, ${MAX_CANONICAL_FRACTION_DIGITS}]`, maxFractionDigits);
  }
  return { now: opts.now, skew, horizon, maxIntegerDigits, maxFractionDigits };
}

async function callSeam<T>(name: string, call: () => T | Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (cause) {
    throw new TallyError('TALLY_INTENT_SEAM_FAILED', `validateIntent: ${name} failed.`, { cause });
  }
}

/** The numerics of an Intent in the order stage e checks them. */
function numerics(intent: Intent): ReadonlyArray<readonly [field: string, value: string]> {
  const out: Array<readonly [string, string]> = [['size', intent.size]];
  if (intent.action === 'open' || intent.action === 'modify') out.push(['leverage', intent.leverage], ['max_slippage', intent.max_slippage]);
  if (intent.action === 'close') out.push(['max_slippage', intent.max_slippage]);
  if ((intent.action === 'open' || intent.action === 'modify') && intent.tp !== undefined) out.push(['tp', intent.tp]);
  if ((intent.action === 'open' || intent.action === 'modify') && intent.sl !== undefined) out.push(['sl', intent.sl]);
  return out;
}

const POSITIVE_CODE = {
  size: 'nonpositive_size',
  leverage: 'nonpositive_leverage',
  tp: 'nonpositive_tp',
  sl: 'nonpositive_sl',
} as const satisfies Record<string, IntentCode>;

function checkBounds(intent: Intent, o: CheckedOptions, hash: string): IntentRejection | null {
  const fields = numerics(intent);
  for (const [field, value] of fields) {
    if (field === 'max_slippage') {
      if (!isUnitInterval(value)) return reject('slippage_out_of_range', `max_slippage ${value} is outside [0, 1]`, hash);
      continue;
    }
    const shape = decimalShape(value);
    if (shape.negative || shape.zero) {
      return reject(POSITIVE_CODE[field as keyof typeof POSITIVE_CODE], `${field} must be > 0 (got ${value})`, hash);
    }
  }
  for (const [field, value] of fields) {
    const n = decimalShape(value).integerDigits;
    if (n > o.maxIntegerDigits) return reject('magnitude_exceeded', `${field} has ${n} integer digits (limit ${o.maxIntegerDigits})`, hash);
  }
  for (const [field, value] of fields) {
    const n = decimalShape(value).fractionDigits;
    if (n > o.maxFractionDigits) return reject('scale_exceeded', `${field} has ${n} fraction digits (limit ${o.maxFractionDigits})`, hash);
  }
  return null;
}

/**
 * Validates one untrusted Intent in the normative stage order and returns the
 * first failure, or the normalized Intent with its hash and verified signer.
 *
 * @example
 * const guard = createNonceGuard();
 * const r = await validateIntent(untrusted, {
 *   resolveSigner: (agentId) => registry.get(agentId) ?? null,
 *   isNonceUsed: guard.lookup,
 *   now: frameTimeMs,
 *   signerCache,
 * });
 * if (r.ok) guard.reserve(r.intent.agent_id, r.intent.nonce, r.intent_hash);
 * else log(r.stage, r.code, r.message);
 */
export async function validateIntent(input: unknown, opts: ValidateIntentOptions): Promise<ValidateIntentResult> {
  const o = checkOptions(opts);

  // a — schema
  let intent: Intent;
  try {
    // instanceof reads the prototype: inside the try, so a hostile Proxy's trap is a schema failure.
    if (input instanceof RefusedIntentJson) return reject('invalid_schema', `(root): the authored bytes are not strict JSON (${input.code}: ${input.message})`);
    const parsed = intentSchema.safeParse(input);
    if (!parsed.success) return reject('invalid_schema', describeFirstIssue(parsed.error));
    intent = parsed.data;
  } catch {
    return reject('invalid_schema', '(root): input could not be read as a plain object');
  }
  const payload = canonicalPayloadOf(intent);
  const hash = hashCanonicalPayload(payload);

  // b — signature
  const registered = await callSeam('resolveSigner', () => opts.resolveSigner(intent.agent_id));
  if (registered === null || registered === undefined) return reject('unknown_signer', `no signer is registered for agent ${intent.agent_id}`, hash);
  const expected = lowerAddress(registered);
  if (expected === null) return reject('unknown_signer', `the registered signer of agent ${intent.agent_id} is not a valid address`, hash);
  const sig = checkSignature(payload, intent.signature, expected, opts.signerCache);
  if (!sig.ok) return reject('bad_signature', sig.reason, hash);

  // c — nonce
  const used = await callSeam('isNonceUsed', () => opts.isNonceUsed(intent.agent_id, intent.nonce));
  if (used === true) return reject('replayed_nonce', `nonce ${intent.nonce} of agent ${intent.agent_id} was already used`, hash);
  if (typeof used === 'object' && used !== null && typeof used.usedBy === 'string') {
    return reject('replayed_nonce', `nonce ${intent.nonce} of agent ${intent.agent_id} was already used by ${used.usedBy}`, hash, used.usedBy);
  }
  if (used !== false) misuse('isNonceUsed must return a boolean or { usedBy: string }', used);

  // d — ttl
  const ttlMs = ttlToMs(intent.ttl);
  if (o.now >= intentEndMs(ttlMs, o.skew)) return reject('expired', `ttl ${intent.ttl} (${ttlMs} ms) is before now (${o.now} ms) by more than the ${o.skew} ms skew`, hash);
  if (o.horizon !== undefined && ttlMs - o.skew > o.now + o.horizon) {
    return reject('ttl_too_far', `ttl ${intent.ttl} is more than ${o.horizon} ms (+${o.skew} ms skew) after now`, hash);
  }

  // e — bounds
  const bounds = checkBounds(intent, o, hash);
  if (bounds !== null) return bounds;

  // f — target
  if (intent.action === 'transfer') {
    if (intent.target_address === undefined) return reject('target_required_on_transfer', 'a transfer needs a target_address', hash);
  } else if (intent.target_address !== undefined) {
    return reject('target_only_on_transfer', `target_address is not allowed on ${intent.action}`, hash);
  }

  return { ok: true, intent, intent_hash: hash, signer: checksumAddress(expected) };
}
