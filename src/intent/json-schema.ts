/**
 * JSON Schema (draft 2020-12) of the Intent WIRE format, generated from the zod
 * schemas on their input side: numerics are `number` or decimal `string`, ttl
 * is integer epoch ms or a zoned ISO-8601 string, nonce is a safe integer or a
 * token string. For external conformance checks; the zod schema remains the
 * authority (it additionally bounds exponents, digit counts and calendar dates).
 */
import { z } from 'zod';
import { intentSchema, unsignedIntentSchema } from './schema.js';

/** A JSON Schema document (plain JSON data, deeply frozen). */
export type JsonSchemaDocument = Readonly<Record<string, unknown>>;

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function wireSchema(schema: z.ZodType, title: string, description: string): JsonSchemaDocument {
  const generated = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  return deepFreeze({ ...generated, title, description });
}

/**
 * JSON Schema of a signed Intent on the wire.
 *
 * @example
 * import Ajv2020 from 'ajv/dist/2020.js';
 * new Ajv2020().validate(intentJsonSchema, JSON.parse(body)); // structural pre-check
 */
export const intentJsonSchema: JsonSchemaDocument = wireSchema(
  intentSchema,
  'Tally signed Intent (wire format)',
  'A signed Intent as it crosses the trust boundary. Numerics may be numbers or decimal strings; they are normalized to canonical decimal strings before hashing and signing.',
);

/**
 * JSON Schema of an unsigned Intent (a proposal, before the harness signs it).
 *
 * @example
 * unsignedIntentJsonSchema.oneOf; // one variant per action
 */
export const unsignedIntentJsonSchema: JsonSchemaDocument = wireSchema(
  unsignedIntentSchema,
  'Tally unsigned Intent (wire format)',
  'An Intent proposal without signature. Same field rules as the signed Intent.',
);
