/**
 * The credentials of `tally demo --ap2`: a user's AP2 v0.2 open payment
 * mandate (an RFC 9901 SD-JWT, ES256) naming the agent's key in `cnf`, the
 * merchant's checkout JWTs, the agent's closed payment mandates (KB-JWTs),
 * and the merchant's and credential provider's receipts (PROTOCOL.md §16.8)
 * — made with the registry's @sd-jwt/core, deterministically, so the demo's
 * receipt root is the same on every machine.
 *
 * The keys are PUBLIC test keys and must never hold value or sign anything
 * real: each P-256 private scalar is SHA-256 of the ASCII label
 * `tally demo ap2 <role> key` (role `user`, `agent`, `merchant`, `provider`), reproducible
 * with `printf 'tally demo ap2 user key' | sha256sum`. Signatures are ECDSA
 * with RFC 6979 deterministic nonces (@noble/curves), salts SHA-256 of a
 * counter, so the same day is the same bytes.
 */
import { createHash } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import { SDJwtInstance } from '@sd-jwt/core';
import type { JWK } from 'jose';

/** A demo key: the public JWK and the private scalar. */
export interface Ap2DemoKey {
  readonly publicKey: JWK;
  readonly privateKey: Uint8Array;
}

const sha = (s: string | Uint8Array): Uint8Array => new Uint8Array(createHash('sha256').update(s).digest());
const b64 = (b: Uint8Array | string): string => Buffer.from(b).toString('base64url');

/** The public test key of a role: private scalar SHA-256(`tally demo ap2 <role> key`). */
export function ap2DemoKey(role: 'user' | 'agent' | 'merchant' | 'provider'): Ap2DemoKey {
  const d = sha(`tally demo ap2 ${role} key`);
  const pub = p256.getPublicKey(d, false); // 0x04 || x || y
  return { publicKey: { kty: 'EC', crv: 'P-256', x: b64(pub.slice(1, 33)), y: b64(pub.slice(33, 65)) }, privateKey: d };
}

/** ES256 over ASCII `data` (a JWS signing input): base64url of r || s, RFC 6979 nonce. */
function es256(key: Ap2DemoKey, data: string): string {
  return b64(p256.sign(sha(Buffer.from(data, 'ascii')), key.privateKey).toCompactRawBytes());
}

/** A compact JWS of a JSON payload (header `{alg: ES256, typ: JWT}`), signed deterministically. */
function jws(key: Ap2DemoKey, payload: unknown): string {
  const input = `${b64(JSON.stringify({ alg: 'ES256', typ: 'JWT' }))}.${b64(JSON.stringify(payload))}`;
  return `${input}.${es256(key, input)}`;
}

/** The merchant the mandate allows, and the verifier every closed mandate names. */
export const AP2_DEMO_MERCHANT = { id: 'merchant-1', name: 'Demo Bookshop', website: 'https://bookshop.example' } as const;
export const AP2_DEMO_AUDIENCE = 'https://credentials-provider.example';
/** The parties spec.ap2 pins (§16.1): the merchant signs checkout JWTs and checkout receipts, the credential provider (the audience) payment receipts. */
export function ap2DemoParties(): { merchant: { iss: string; key: JWK }; provider: { iss: string; key: JWK } } {
  return { merchant: { iss: AP2_DEMO_MERCHANT.website, key: ap2DemoKey('merchant').publicKey }, provider: { iss: AP2_DEMO_AUDIENCE, key: ap2DemoKey('provider').publicKey } };
}
/** The open checkout mandate text `payment.reference` names (its digest); carried verbatim in each turn. */
export const AP2_DEMO_OPEN_CHECKOUT = 'demo-open-checkout-mandate~';
/** The budget in the mandate: a JSON number of major units, converted exactly (USD: × 10^2). */
export const AP2_DEMO_BUDGET = { currency: 'USD', max: 100 } as const;

function instance(user: Ap2DemoKey, agent: Ap2DemoKey): SDJwtInstance<Record<string, unknown>> {
  let salts = 0;
  return new SDJwtInstance<Record<string, unknown>>({
    signer: (data: string) => es256(user, data),
    signAlg: 'ES256',
    kbSigner: (data: string) => es256(agent, data),
    kbSignAlg: 'ES256',
    hasher: (data: string | ArrayBuffer) => sha(typeof data === 'string' ? Buffer.from(data, 'ascii') : new Uint8Array(data)),
    hashAlg: 'sha-256',
    // 128-bit salts, deterministic: SHA-256 of a counter, truncated.
    saltGenerator: () => b64(sha(`tally demo ap2 salt ${salts++}`).slice(0, 16)),
  });
}

/** The user's open payment mandate (every constraint selectively disclosed and released), valid over [iat, exp) seconds. */
export async function ap2DemoOpenMandate(o: { iat: number; exp: number }): Promise<string> {
  const user = ap2DemoKey('user'), agent = ap2DemoKey('agent');
  const constraints: Record<string, unknown>[] = [
    { type: 'payment.reference', conditional_transaction_id: b64(sha(Buffer.from(AP2_DEMO_OPEN_CHECKOUT, 'ascii'))) },
    { type: 'payment.allowed_payees', allowed: [AP2_DEMO_MERCHANT] },
    { type: 'payment.amount_range', currency: 'USD', max: 5_000 },
    { type: 'payment.budget', currency: AP2_DEMO_BUDGET.currency, max: AP2_DEMO_BUDGET.max },
    { type: 'payment.agent_recurrence', frequency: 'ON_DEMAND', max_occurrences: 10 },
  ];
  const payload = { vct: 'mandate.payment.open.1', iat: o.iat, exp: o.exp, cnf: { jwk: agent.publicKey }, constraints };
  return instance(user, agent).issue(payload, { constraints: { _sd: constraints.map((_, i) => i) } } as never, { header: { typ: 'dc+sd-jwt' } });
}

/** One purchase as an authored turn: canonical JSON {checkout_jwt, open_checkout, payment}, and its transaction id. */
export async function ap2DemoPurchase(open: string, o: { sku: string; amount: number; nonce: string; iat: number }): Promise<{ body: Uint8Array; transactionId: string; payment: string }> {
  const checkoutJwt = jws(ap2DemoKey('merchant'), { merchant: AP2_DEMO_MERCHANT, line_items: [{ id: o.sku, quantity: 1 }], total: { amount: o.amount, currency: 'USD' }, nonce: o.nonce });
  const transactionId = b64(sha(Buffer.from(checkoutJwt, 'ascii')));
  const count = open.split('~').length - 2;
  const frame = { constraints: Object.fromEntries(Array.from({ length: count }, (_, i) => [i, true])) };
  const payment = await instance(ap2DemoKey('user'), ap2DemoKey('agent')).present(open, frame as never, {
    kb: {
      payload: {
        iat: o.iat, aud: AP2_DEMO_AUDIENCE, nonce: o.nonce, vct: 'mandate.payment.1', transaction_id: transactionId,
        payee: AP2_DEMO_MERCHANT, payment_amount: { amount: o.amount, currency: 'USD' }, payment_instrument: { id: 'card-1', type: 'card' },
      } as never,
    },
  });
  // Canonical JSON (§2): members sorted, no spaces; the three values are plain ASCII strings.
  return { body: new TextEncoder().encode(JSON.stringify({ checkout_jwt: checkoutJwt, open_checkout: AP2_DEMO_OPEN_CHECKOUT, payment })), transactionId, payment };
}

/**
 * The answers to an admitted purchase, as a later frame carries them
 * (`data.ap2.receipts`, §16.8): the merchant's checkout receipt (reference
 * the transaction id) and the credential provider's payment receipt
 * (reference base64url SHA-256 of the closed payment mandate), both Success,
 * issued at `iat`.
 */
export function ap2DemoReceipts(p: { transactionId: string; payment: string }, o: { n: number; iat: number }): { type: 'checkout' | 'payment'; jwt: string }[] {
  const { merchant, provider } = ap2DemoParties();
  const reference = b64(sha(Buffer.from(p.payment, 'ascii')));
  return [
    { type: 'checkout', jwt: jws(ap2DemoKey('merchant'), { iss: merchant.iss, iat: o.iat, reference: p.transactionId, status: 'Success', order_id: `order-${o.n}` }) },
    { type: 'payment', jwt: jws(ap2DemoKey('provider'), { iss: provider.iss, iat: o.iat, reference, status: 'Success', payment_id: `pay-${o.n}`, psp_confirmation_id: `psp-${o.n}`, network_confirmation_id: `net-${o.n}` }) },
  ];
}
