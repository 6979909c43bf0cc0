/**
 * Field schemas of the Intent wire format. Each field accepts its loose wire
 * spellings and transforms them at once to the single normalized string that
 * is canonicalized, hashed and signed.
 */
import { z } from 'zod';
import { DECIMAL_LITERAL_PATTERN, MAX_DECIMAL_LITERAL_LENGTH, canonicalDecimal } from './decimal.js';
import { MAX_TTL_MS, MAX_TTL_STRING_LENGTH, MIN_TTL_MS, TTL_STRING_PATTERN, normalizeTtl } from './ttl.js';

/** Longest accepted `agent_id` and `nonce` string. */
export const MAX_TOKEN_LENGTH = 128;

/** `agent_id`: 1–128 printable ASCII characters, no spaces. */
export const AGENT_ID_PATTERN = '^[\\x21-\\x7e]+$';
/** `nonce` string token: 1–128 printable ASCII characters, no spaces (opaque: `"05"` ≠ `"5"`). */
export const NONCE_PATTERN = '^[\\x21-\\x7e]+$';
/** `market` symbol, e.g. `BTC-PERP`, `kPEPE-PERP` (case preserved). */
export const MARKET_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._/:-]{0,63}$';
/** `target_address`: 20-byte hex address, any letter case (normalized to lowercase). */
export const ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';
/** `signature`: 65-byte hex `r ‖ s ‖ v` (normalized to lowercase). */
export const SIGNATURE_PATTERN = '^0x[0-9a-fA-F]{130}$';

const abort = { abort: true } as const;

/** A numeric: a finite JS number or a decimal string, normalized to a canonical decimal string. */
export const decimalField = z
  .union([z.number(), z.string().max(MAX_DECIMAL_LITERAL_LENGTH, abort).regex(new RegExp(DECIMAL_LITERAL_PATTERN), 'not a decimal literal')])
  .transform((v, ctx): string => {
    const r = canonicalDecimal(v);
    if (r.ok) return r.value;
    ctx.issues.push({ code: 'custom', message: `invalid decimal: ${r.reason}`, input: v });
    return z.NEVER;
  });

/** The ttl: integer epoch ms or ISO-8601 with explicit zone, normalized to `YYYY-MM-DDTHH:mm:ss.sssZ`. */
export const ttlField = z
  .union([
    z.number().int().min(MIN_TTL_MS).max(MAX_TTL_MS),
    z.string().max(MAX_TTL_STRING_LENGTH, abort).regex(new RegExp(TTL_STRING_PATTERN), 'not ISO-8601 with an explicit zone (Z or ±hh:mm)'),
  ])
  .transform((v, ctx): string => {
    const r = normalizeTtl(v);
    if (r.ok) return r.iso;
    ctx.issues.push({ code: 'custom', message: `invalid ttl: ${r.reason}`, input: v });
    return z.NEVER;
  });

/** The nonce: a safe integer or a string token, normalized to the string token. */
export const nonceField = z
  .union([z.number().int(), z.string().min(1, abort).max(MAX_TOKEN_LENGTH, abort).regex(new RegExp(NONCE_PATTERN), 'nonce must be printable ASCII without spaces')])
  .transform((v): string => (typeof v === 'number' ? String(v) : v));

/** The claimed issuer. */
export const agentIdField = z.string().min(1, abort).max(MAX_TOKEN_LENGTH, abort).regex(new RegExp(AGENT_ID_PATTERN), 'agent_id must be printable ASCII without spaces');

/** A market symbol. */
export const marketField = z.string().max(64, abort).regex(new RegExp(MARKET_PATTERN), 'not a market symbol');

/** Position side. */
export const sideField = z.enum(['long', 'short']);

/** A 20-byte hex address, lowercased so that every spelling signs identically. */
export const addressField = z
  .string()
  .max(42, abort)
  .regex(new RegExp(ADDRESS_PATTERN), 'not a 0x-prefixed 20-byte hex address')
  .transform((v): string => v.toLowerCase());

/** A 65-byte EIP-191 signature, lowercased. */
export const signatureField = z
  .string()
  .max(132, abort)
  .regex(new RegExp(SIGNATURE_PATTERN), 'not a 0x-prefixed 65-byte hex signature')
  .transform((v): string => v.toLowerCase());
