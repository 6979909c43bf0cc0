/**
 * AP2 credentials made with the registry libraries (@sd-jwt/core,
 * @sd-jwt/crypto-nodejs, jose), fresh keys per call: an open payment mandate
 * signed by a user for an agent, and closed payment mandates (KB-JWTs) the
 * agent signs as turn bodies.
 */
import { createHash } from 'node:crypto';
import { SDJwtInstance } from '@sd-jwt/core';
import { ES256, digest, generateSalt } from '@sd-jwt/crypto-nodejs';
import { CompactSign, importJWK, type JWK } from 'jose';

export interface KeyPair { readonly publicKey: JWK; readonly privateKey: JWK }
export const b64sha = (s: string): string => createHash('sha256').update(s, 'ascii').digest('base64url');

export async function keyPair(): Promise<KeyPair> {
  const { publicKey: p, privateKey: k } = await ES256.generateKeyPair();
  return { publicKey: { kty: p.kty!, crv: p.crv!, x: p.x!, y: p.y! }, privateKey: { kty: k.kty!, crv: k.crv!, x: k.x!, y: k.y!, d: k.d! } };
}

export const MERCHANT = { id: 'merchant_1', name: 'Generic Merchant', website: 'https://demo-merchant.example' };
export const AUDIENCE = 'https://credentials-provider.example';
export const OPEN_CHECKOUT = 'open-checkout-mandate~';

export interface World { readonly user: KeyPair; readonly agent: KeyPair; readonly merchant: KeyPair; readonly provider: KeyPair }
export async function world(): Promise<World> {
  return { user: await keyPair(), agent: await keyPair(), merchant: await keyPair(), provider: await keyPair() };
}

export const MERCHANT_ISS = 'https://demo-merchant.example';
export const PROVIDER_ISS = AUDIENCE;
/** The session spec's ap2 member for `mandate`: the user's key, the audience, the merchant's and provider's pinned keys. */
export function ap2Spec(w: World, mandate: string): Record<string, unknown> {
  return { mandate, issuer: w.user.publicKey, audience: AUDIENCE, merchant: { iss: MERCHANT_ISS, key: w.merchant.publicKey }, provider: { iss: PROVIDER_ISS, key: w.provider.publicKey } };
}

/** A receipt JWT (AP2 v0.2 schemas) signed by `by` (default: the type's party), answering `reference`. */
export async function receiptJwt(w: World, type: 'checkout' | 'payment' | 'mandate', reference: string, o: { status?: 'ok' | 'error'; by?: KeyPair; iss?: string; iat?: number } = {}): Promise<string> {
  const okStatus = (o.status ?? 'ok') === 'ok';
  const body: Record<string, unknown> = { iss: o.iss ?? (type === 'checkout' ? MERCHANT_ISS : PROVIDER_ISS), iat: o.iat ?? 1_893_456_000, reference };
  if (type === 'mandate') Object.assign(body, okStatus ? { result: 'success' } : { result: 'error', error: 'invalid_mandate' });
  else if (type === 'checkout') Object.assign(body, okStatus ? { status: 'Success', order_id: `order-${reference.slice(0, 8)}` } : { status: 'Error', error: 'invalid_mandate', error_description: 'refused' });
  else Object.assign(body, { payment_id: `pay-${reference.slice(0, 8)}` }, okStatus ? { status: 'Success', psp_confirmation_id: 'psp-1', network_confirmation_id: 'net-1' } : { status: 'Error', error: 'invalid_mandate', error_description: 'refused' });
  const key = o.by ?? (type === 'checkout' ? w.merchant : w.provider);
  return new CompactSign(new TextEncoder().encode(JSON.stringify(body))).setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).sign(await importJWK(key.privateKey, 'ES256'));
}

/** The payment presentation of a turn body and its checkout hash (the transaction id). */
export function turnParts(body: Uint8Array): { payment: string; reference: string; transactionId: string } {
  const t = JSON.parse(new TextDecoder().decode(body)) as { checkout_jwt: string; payment: string };
  return { payment: t.payment, reference: b64sha(t.payment), transactionId: b64sha(t.checkout_jwt) };
}

function instance(w: World): Promise<SDJwtInstance<Record<string, unknown>>> {
  return (async () => new SDJwtInstance<Record<string, unknown>>({
    signer: await ES256.getSigner(w.user.privateKey), signAlg: 'ES256',
    kbSigner: await ES256.getSigner(w.agent.privateKey), kbSignAlg: 'ES256',
    hasher: (d, alg) => digest(d, alg ?? 'sha-256'), hashAlg: 'sha-256', saltGenerator: generateSalt,
  }))();
}

/** An open payment mandate (every constraint selectively disclosed and released), valid over [iat, exp). */
export async function openPaymentMandate(w: World, o: { iat: number; exp: number; budget: { currency: string; max: number }; extra?: Record<string, unknown>[] }): Promise<string> {
  const constraints: Record<string, unknown>[] = [
    { type: 'payment.reference', conditional_transaction_id: b64sha(OPEN_CHECKOUT) },
    { type: 'payment.allowed_payees', allowed: [MERCHANT] },
    { type: 'payment.budget', currency: o.budget.currency, max: o.budget.max },
    ...(o.extra ?? []),
  ];
  const payload = { vct: 'mandate.payment.open.1', iat: o.iat, exp: o.exp, cnf: { jwk: w.agent.publicKey }, constraints };
  const inst = await instance(w);
  return inst.issue(payload, { constraints: { _sd: constraints.map((_, i) => i) } } as never, { header: { typ: 'dc+sd-jwt' } });
}

/** A turn body: canonical JSON {checkout_jwt, open_checkout, payment} for one purchase. */
export async function paymentTurn(w: World, open: string, o: { amount: number; currency?: string; nonce: string; iat: number; sku?: string }): Promise<Uint8Array> {
  const checkoutJwt = await new CompactSign(new TextEncoder().encode(JSON.stringify({ merchant: MERCHANT, line_items: [{ id: o.sku ?? 'sku-1', quantity: 1 }], nonce: o.nonce })))
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).sign(await importJWK(w.merchant.privateKey, 'ES256'));
  const inst = await instance(w);
  // Release every disclosure the open mandate carries (one per constraint).
  const count = open.split('~').length - 2;
  const frame = { constraints: Object.fromEntries(Array.from({ length: count }, (_, i) => [i, true])) };
  const payment = await inst.present(open, frame as never, {
    kb: { payload: { iat: o.iat, aud: AUDIENCE, nonce: o.nonce, vct: 'mandate.payment.1', transaction_id: b64sha(checkoutJwt), payee: MERCHANT, payment_amount: { amount: o.amount, currency: o.currency ?? 'USD' }, payment_instrument: { id: 'card-1', type: 'card' } } as never },
  });
  // Canonical JSON: members sorted, no spaces (the engine's canonical form for these three strings).
  return new TextEncoder().encode(JSON.stringify({ checkout_jwt: checkoutJwt, open_checkout: OPEN_CHECKOUT, payment }));
}

/** AP2 docs/ap2/checkout_mandate.md's example item (Apache-2.0). */
export const SHOE = { id: 'supershoe_limited_edition_gold_sneaker_womens_9_0', title: 'SuperShoe Limited Edition Gold' };
/** The audience of a closed checkout mandate: the merchant. */
export const MERCHANT_AUDIENCE = MERCHANT_ISS;

/** An open checkout mandate for one SHOE from MERCHANT (every constraint selectively disclosed and released). */
export async function openCheckoutMandate(w: World, o: { iat: number; exp: number }): Promise<string> {
  const constraints = [
    { type: 'checkout.line_items', items: [{ id: 'line_1', acceptable_items: [SHOE], quantity: 1 }] },
    { type: 'checkout.allowed_merchants', allowed: [MERCHANT] },
  ];
  const inst = await instance(w);
  return inst.issue({ vct: 'mandate.checkout.open.1', iat: o.iat, exp: o.exp, cnf: { jwk: w.agent.publicKey }, constraints }, { constraints: { _sd: [0, 1] } } as never, { header: { typ: 'dc+sd-jwt' } });
}

/** A checkout session's turn body: canonical JSON {checkout} — the agent's closed checkout mandate over a merchant-signed cart. */
export async function checkoutTurn(w: World, open: string, o: { nonce: string; iat: number; merchant?: { id: string; name: string; website?: string }; by?: KeyPair; item?: { id: string; title: string } }): Promise<{ body: Uint8Array; checkoutHash: string }> {
  const cart = { id: `checkout-${o.nonce}`, merchant: o.merchant ?? MERCHANT, line_items: [{ id: 'li_1', item: o.item ?? SHOE, quantity: 1 }], currency: 'USD' };
  const checkoutJwt = await new CompactSign(new TextEncoder().encode(JSON.stringify(cart))).setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).sign(await importJWK((o.by ?? w.merchant).privateKey, 'ES256'));
  const inst = await instance(w);
  const checkout = await inst.present(open, { constraints: { 0: true, 1: true } } as never, {
    kb: { payload: { iat: o.iat, aud: MERCHANT_AUDIENCE, nonce: o.nonce, vct: 'mandate.checkout.1', checkout_jwt: checkoutJwt, checkout_hash: b64sha(checkoutJwt) } as never },
  });
  return { body: new TextEncoder().encode(JSON.stringify({ checkout })), checkoutHash: b64sha(checkoutJwt) };
}
