/**
 * The accepted signature encoding: 65 bytes `r ‖ s ‖ v`, `v ∈ {27, 28}`,
 * `1 ≤ r < n`, `1 ≤ s ≤ n/2` (EIP-2 low-s; a high-s twin is malleable and is
 * rejected rather than normalized).
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';

/** The secp256k1 group order n. */
export const SECP256K1_N: bigint = secp256k1.CURVE.n;
/** n / 2 (floor): the largest accepted `s`. */
export const SECP256K1_HALF_N: bigint = SECP256K1_N >> 1n;

/** A signature that passed the encoding checks. */
export interface ParsedSignature {
  readonly r: bigint;
  readonly s: bigint;
  /** y-parity of the nonce point R (v − 27). */
  readonly recovery: 0 | 1;
}

/** Result of {@link parseSignature}. */
export type ParseSignatureResult = { readonly ok: true; readonly sig: ParsedSignature } | { readonly ok: false; readonly reason: string };

const SIG_RE = /^0x[0-9a-fA-F]{130}$/;

/**
 * Parses and checks a 65-byte hex signature. Never throws.
 *
 * @example
 * parseSignature('0x' + 'ff'.repeat(65)).ok; // false (r ≥ n)
 */
export function parseSignature(hex: unknown): ParseSignatureResult {
  if (typeof hex !== 'string' || !SIG_RE.test(hex)) return { ok: false, reason: 'signature must be 0x + 130 hex characters' };
  const r = BigInt(`0x${hex.slice(2, 66)}`);
  const s = BigInt(`0x${hex.slice(66, 130)}`);
  const v = Number.parseInt(hex.slice(130, 132), 16);
  if (v !== 27 && v !== 28) return { ok: false, reason: 'signature v must be 27 or 28' };
  if (r === 0n || r >= SECP256K1_N) return { ok: false, reason: 'signature r out of range' };
  if (s === 0n || s >= SECP256K1_N) return { ok: false, reason: 'signature s out of range' };
  if (s > SECP256K1_HALF_N) return { ok: false, reason: 'signature s is high (malleable); expected s ≤ n/2' };
  return { ok: true, sig: { r, s, recovery: v === 27 ? 0 : 1 } };
}
