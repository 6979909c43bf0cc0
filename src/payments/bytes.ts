/**
 * Every hashed byte string of the payment referee (docs/PROTOCOL.md, "x402 payments"):
 *
 * - payment hash = `SHA-256("tally/v1/x402-payment" ‖ 0x00 ‖ canonical JSON of the PaymentPayload)`;
 * - nonce key (the store reservation of an EIP-3009 nonce) = `"x402 <network> <asset> <payer>"`
 *   (asset and payer lowercase), nonce = the 32-byte nonce as lowercase 0x-hex;
 * - payment-id key (the reservation of an x402 `payment-identifier`) = `"x402-id <payer>"`, nonce = the id.
 */
import { sha256 } from '../codec/sha256.js';
import { canonicalBytes, taggedHash, toHex, type CanonicalObject } from '../protocol/index.js';

export const PAYMENT_TAGS = Object.freeze({ payment: 'tally/v1/x402-payment' });

/** The payment hash of a PaymentPayload, 64 lowercase hex. */
export function paymentHash(payload: CanonicalObject): string {
  return toHex(taggedHash(sha256, PAYMENT_TAGS.payment, canonicalBytes(payload)));
}

/** The store key under which a payer's EIP-3009 nonces for one asset are reserved. */
export function paymentNonceKey(network: string, asset: string, payer: string): string {
  return `x402 ${network} ${asset.toLowerCase()} ${payer.toLowerCase()}`;
}

/** The store key under which a payer's x402 payment identifiers are reserved. */
export function paymentIdKey(payer: string): string {
  return `x402-id ${payer.toLowerCase()}`;
}
