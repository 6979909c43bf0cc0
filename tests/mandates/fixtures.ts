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

export interface World { readonly user: KeyPair; readonly agent: KeyPair; readonly merchant: KeyPair }
export async function world(): Promise<World> {
  return { user: await keyPair(), agent: await keyPair(), merchant: await keyPair() };
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
