/**
 * The agent's closed checkout mandate under an AP2 open checkout mandate
 * (PROTOCOL.md §16.11), verified end to end: the KB-JWT against the open
 * mandate (closed.ts: `cnf` key, `sd_hash`, `iat`/`aud`/`nonce`,
 * `mandate.checkout.1`, `checkout_hash` = SHA-256 of `checkout_jwt`), then
 * `checkout_jwt` under the merchant's pinned key (receipts.ts), then the cart
 * that JWT signs ({@link readCart}), which the open mandate's constraints are
 * evaluated against. The same cart reader serves VI's L3b (vi-checkout.ts).
 */
import { readCompactTurn } from './turn-body.js';
import { refuse, type MandateResult } from './codes.js';
import { verifyClosedMandate } from './closed.js';
import type { CheckoutRequest, Merchant } from './constraints.js';
import type { OpenMandate } from './open.js';
import { verifyCheckoutJwt, type Party } from './receipts.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The cart a merchant-signed checkout JWT payload carries, in AP2 v0.2's
 * Checkout shape (ucp/types/checkout.json, line_item.json; the SDK's
 * max-flow reads `line_items[].item.id` and `quantity`): `merchant`
 * `{id, name, website?}` and `line_items` `[{item: {id}, quantity ≥ 1}, …]`
 * (≥ 1 line). Other members are the merchant's and not read.
 */
export function readCart(payload: Readonly<Record<string, unknown>>): MandateResult<CheckoutRequest> {
  const m = payload.merchant;
  const bad = refuse('checkout-malformed', 'the checkout JWT payload carries merchant {id, name, website?} and line_items [{item: {id}, quantity: integer ≥ 1}, …]');
  if (!isObject(m) || typeof m.id !== 'string' || typeof m.name !== 'string' || (m.website !== undefined && typeof m.website !== 'string')) return bad;
  const merchant: Merchant = m.website === undefined ? { id: m.id, name: m.name } : { id: m.id, name: m.name, website: m.website as string };
  const lines = payload.line_items;
  if (!Array.isArray(lines) || lines.length === 0) return bad;
  const lineItems: { id: string; quantity: number }[] = [];
  for (const li of lines) {
    if (!isObject(li) || !isObject(li.item) || typeof li.item.id !== 'string' || !Number.isSafeInteger(li.quantity) || (li.quantity as number) < 1) return bad;
    lineItems.push({ id: li.item.id, quantity: li.quantity as number });
  }
  return { ok: true, value: { merchant, lineItems } };
}

/** A verified closed checkout mandate: its checkout hash (the transaction id), the KB-JWT nonce, and the cart. */
export interface VerifiedCheckout {
  readonly checkoutHash: string;
  readonly checkoutJwt: string;
  readonly nonce: string;
  readonly cart: CheckoutRequest;
}

/** Verifies `presentation` (`<jwt>~<d>~…~<kb-jwt>`) as a closed checkout mandate under `open` at `now`. */
export async function verifyCheckoutMandate(presentation: string, open: OpenMandate, opts: { now: number; aud: string; merchant: Party }): Promise<MandateResult<VerifiedCheckout>> {
  const closed = await verifyClosedMandate(presentation, open, { now: opts.now, aud: opts.aud });
  if (!closed.ok) return closed;
  if (closed.value.kind !== 'checkout') return refuse('closed-vct', 'a checkout session takes checkout mandates');
  const signed = await verifyCheckoutJwt(closed.value.checkoutJwt, opts.merchant);
  if (!signed.ok) return signed;
  const cart = readCart(signed.value);
  if (!cart.ok) return cart;
  return { ok: true, value: { checkoutHash: closed.value.checkoutHash, checkoutJwt: closed.value.checkoutJwt, nonce: closed.value.claims['nonce'] as string, cart: cart.value } };
}

/** A checkout session's turn body: canonical JSON {checkout: "<jwt>~<d>~…~<kb-jwt>"}, or undefined. */
export function readCheckoutTurn(bytes: Uint8Array): string | undefined {
  return readCompactTurn(bytes, ['checkout'])?.checkout;
}
