/**
 * The Intent schema: a strict discriminated union on `action`
 * (`open` | `modify` | `close` | `transfer`). Types are derived from it, so the
 * runtime contract and the TypeScript types cannot drift.
 *
 * | field          | open | modify | close | transfer |
 * |----------------|------|--------|-------|----------|
 * | agent_id, nonce, ttl, size | ✓ | ✓ | ✓ | ✓ |
 * | market         | ✓    | ✓      | ✓     |          |
 * | side, leverage | ✓    | ✓      |       |          |
 * | max_slippage   | ✓    | ✓      | ✓     |          |
 * | tp, sl         | ?    | ?      |       |          |
 * | target_address | ?    | ?      | ?     | ? (required by stage f) |
 * | signature      | ✓ (signed form only)                 |
 *
 * `target_address` is structurally permitted everywhere and policed by
 * validation stage f, so a smuggled target is reported, never silently dropped.
 */
import { z } from 'zod';
import {
  addressField,
  agentIdField,
  decimalField,
  marketField,
  nonceField,
  sideField,
  signatureField,
  ttlField,
} from './fields.js';

/** Removes keys whose value is `undefined` (an explicit `tp: undefined` means "absent"). */
function dropUndefined<T extends object>(value: T): T {
  for (const key of Object.keys(value) as Array<keyof T>) if (value[key] === undefined) delete value[key];
  return value;
}

/** The four Intent actions. */
export const INTENT_ACTIONS = ['open', 'modify', 'close', 'transfer'] as const;

const common = {
  agent_id: agentIdField,
  nonce: nonceField,
  ttl: ttlField,
  size: decimalField,
  target_address: addressField.optional(),
};

const positionShape = {
  ...common,
  market: marketField,
  side: sideField,
  leverage: decimalField,
  max_slippage: decimalField,
  tp: decimalField.optional(),
  sl: decimalField.optional(),
};

const openShape = { action: z.literal('open'), ...positionShape };
const modifyShape = { action: z.literal('modify'), ...positionShape };
const closeShape = { action: z.literal('close'), ...common, market: marketField, max_slippage: decimalField };
const transferShape = { action: z.literal('transfer'), ...common };

/**
 * An Intent as proposed, before the harness signs it: every field except
 * `signature`. Parsing normalizes numerics, ttl, nonce and address.
 *
 * @example
 * unsignedIntentSchema.parse({ action: 'transfer', agent_id: 'a1', nonce: 7, ttl: 1893456000000, size: 1.0, target_address: '0x000000000000000000000000000000000000dEaD' });
 * // → { ..., nonce: '7', ttl: '2030-01-01T00:00:00.000Z', size: '1', target_address: '0x…dead' }
 */
export const unsignedIntentSchema = z
  .discriminatedUnion('action', [z.strictObject(openShape), z.strictObject(modifyShape), z.strictObject(closeShape), z.strictObject(transferShape)])
  .transform(dropUndefined);

/**
 * A signed Intent: the unsigned fields plus the EIP-191 `signature` over the
 * canonical payload.
 *
 * @example
 * const r = intentSchema.safeParse(untrustedJson);
 * if (r.success) r.data.size; // canonical decimal string
 */
export const intentSchema = z
  .discriminatedUnion('action', [
    z.strictObject({ ...openShape, signature: signatureField }),
    z.strictObject({ ...modifyShape, signature: signatureField }),
    z.strictObject({ ...closeShape, signature: signatureField }),
    z.strictObject({ ...transferShape, signature: signatureField }),
  ])
  .transform(dropUndefined);

/** A parsed, normalized signed Intent (all values are strings). */
export type Intent = z.output<typeof intentSchema>;
/** What the wire may carry for a signed Intent (numerics as number or string, etc.). */
export type IntentInput = z.input<typeof intentSchema>;
/** A parsed, normalized unsigned Intent. */
export type UnsignedIntent = z.output<typeof unsignedIntentSchema>;
/** What an emitter may pass for an unsigned Intent. */
export type UnsignedIntentInput = z.input<typeof unsignedIntentSchema>;
/** One of {@link INTENT_ACTIONS}. */
export type IntentAction = Intent['action'];

true satisfies [Exclude<IntentAction, (typeof INTENT_ACTIONS)[number]>] extends [never] ? true : false;
true satisfies [Exclude<(typeof INTENT_ACTIONS)[number], IntentAction>] extends [never] ? true : false;
