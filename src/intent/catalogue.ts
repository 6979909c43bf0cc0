/**
 * The machine-readable catalogue of every Intent ruling: which stage, when it
 * happens, and how the emitter fixes it. `tally codes` prints this table.
 */
import type { IntentCode, IntentCodeStages } from './codes.js';

/** One catalogue row; `stage` is the stage its `code` belongs to. */
export type IntentRulingEntry = {
  readonly [C in IntentCode]: {
    readonly stage: IntentCodeStages[C];
    readonly code: C;
    /** When validation returns this ruling. */
    readonly when: string;
    /** What the emitter must change to get past it. */
    readonly fix: string;
  };
}[IntentCode];

function freezeRows<T extends readonly IntentRulingEntry[]>(rows: T): T {
  for (const row of rows) Object.freeze(row);
  return Object.freeze(rows);
}

/**
 * Every `{ stage, code }` of `validateIntent`, in stage order (a → f) and, inside
 * a stage, in the order the checks run.
 *
 * @example
 * INTENT_RULING_CATALOGUE.find((e) => e.code === 'expired')?.fix;
 */
export const INTENT_RULING_CATALOGUE = freezeRows([
  {
    stage: 'schema',
    code: 'invalid_schema',
    when: 'The input is not a strict Intent object: unknown action or key, missing or mistyped field, a numeric that is NaN/Infinity/not a decimal, longer than 100 characters, with an exponent above 100 or more than 80 integer or fraction digits; a ttl without zone or with an impossible date; a nonce outside 1–128 printable ASCII characters or not a safe integer; a null optional field; an unreadable (hostile) object.',
    fix: 'Emit the Intent exactly as intentJsonSchema describes: numerics as decimal strings, ttl as ISO-8601 with Z or ±hh:mm (or epoch ms), only the fields of its action, and omit absent optionals instead of sending null.',
  },
  {
    stage: 'signature',
    code: 'unknown_signer',
    when: 'resolveSigner(agent_id) returns null/undefined or a string that is not a 20-byte hex address: no key is authorized for this agent.',
    fix: 'Register the agent and its signing address with the session before it emits Intents, or correct agent_id.',
  },
  {
    stage: 'signature',
    code: 'bad_signature',
    when: 'The signature is not 65 bytes r‖s‖v with v ∈ {27, 28}, r or s is out of range, s is above n/2 (malleable high-s), or the EIP-191 signer of the canonical payload is not the registered address.',
    fix: 'Sign canonicalPayload(intent) with EIP-191 personal_sign using the registered key (signIntent does this), emit a low-s signature, and do not alter any field after signing.',
  },
  {
    stage: 'nonce',
    code: 'replayed_nonce',
    when: 'isNonceUsed(agent_id, nonce) reports the pair as already used; `usedBy` names the intent_hash of the first user when known.',
    fix: 'Use a fresh nonce for every Intent of an agent (a counter or random token); never resend a signed Intent.',
  },
  {
    stage: 'ttl',
    code: 'expired',
    when: 'ttl + clockSkewMs < now (the frame time). now === ttl is still valid.',
    fix: 'Emit with a ttl in the future relative to the session clock, and submit before it passes.',
  },
  {
    stage: 'ttl',
    code: 'ttl_too_far',
    when: 'maxTtlHorizonMs is configured and ttl − clockSkewMs > now + maxTtlHorizonMs.',
    fix: 'Use a shorter ttl, within the configured horizon from now.',
  },
  {
    stage: 'bounds',
    code: 'nonpositive_size',
    when: 'size ≤ 0 after normalization (so "-0.0" is 0), on any action.',
    fix: 'Send a strictly positive size; direction is expressed by action/side, never by sign.',
  },
  {
    stage: 'bounds',
    code: 'nonpositive_leverage',
    when: 'leverage ≤ 0 (open, modify).',
    fix: 'Send a strictly positive leverage.',
  },
  {
    stage: 'bounds',
    code: 'slippage_out_of_range',
    when: 'max_slippage (open, modify, close) is outside the closed interval [0, 1]; it is a fraction, not a percentage.',
    fix: 'Send max_slippage as a fraction, e.g. "0.005" for 0.5 %.',
  },
  {
    stage: 'bounds',
    code: 'nonpositive_tp',
    when: 'tp is present (open, modify) and ≤ 0.',
    fix: 'Send a strictly positive take-profit price, or omit tp.',
  },
  {
    stage: 'bounds',
    code: 'nonpositive_sl',
    when: 'sl is present (open, modify) and ≤ 0.',
    fix: 'Send a strictly positive stop-loss price, or omit sl.',
  },
  {
    stage: 'bounds',
    code: 'magnitude_exceeded',
    when: 'After the sign/range checks pass: a numeric (size, leverage, max_slippage, tp, sl, in that order) has more integer digits than limits.maxIntegerDigits (default 18).',
    fix: 'Send a value of sane magnitude; raise limits.maxIntegerDigits only if the market truly needs it.',
  },
  {
    stage: 'bounds',
    code: 'scale_exceeded',
    when: 'After the magnitude checks pass: a numeric has more fraction digits than limits.maxFractionDigits (default 18).',
    fix: 'Round the value to the market precision before signing.',
  },
  {
    stage: 'target',
    code: 'target_only_on_transfer',
    when: 'target_address is present on an open, modify or close Intent.',
    fix: 'Remove target_address; it is only meaningful on transfer.',
  },
  {
    stage: 'target',
    code: 'target_required_on_transfer',
    when: 'A transfer Intent has no target_address.',
    fix: 'Add the destination target_address (0x + 40 hex) to the transfer.',
  },
] as const satisfies readonly IntentRulingEntry[]);

// Every code has a row (duplicates and order are pinned by tests).
true satisfies [Exclude<IntentCode, (typeof INTENT_RULING_CATALOGUE)[number]['code']>] extends [never] ? true : false;
