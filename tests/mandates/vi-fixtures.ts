/**
 * A Verifiable Intent v0.1 L2 autonomous credential and the agent's L3a
 * purchases under it, for the tests that record VI days (tests/mandates/
 * vi-session.test.ts, tests/web/ap2.test.ts). The credential is the `vi`
 * vector `valid-autonomous` (docs/vectors/ap2.json); the L3a is made with
 * @sd-jwt/core and the agent's test key from that file.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SDJwtInstance } from '@sd-jwt/core';
import { ES256, digest, generateSalt } from '@sd-jwt/crypto-nodejs';
import { CompactSign, importJWK, type JWK } from 'jose';

const V = (JSON.parse(readFileSync(new URL('../../docs/vectors/ap2.json', import.meta.url), 'utf8')) as { vi: { keys: Record<string, { public: JWK; private: JWK }>; vectors: { name: string; l1: string; l2: string; now: number }[] } }).vi;
export const cred = V.vectors.find((v) => v.name === 'valid-autonomous')!;
export const keys = V.keys;
export const AUD = 'https://network.example/vi/authorize';
export const T0 = cred.now * 1000;
export const PAYEE = { id: 'audioshop', name: 'AudioShop Inc.', website: 'https://audioshop.example.com' };
export const b64sha = (s: string) => createHash('sha256').update(s, 'ascii').digest('base64url');

/** The L2's payment mandate disclosure (an L3a's sd_hash covers the L2 base JWT and it). */
export const paymentDisclosure = cred.l2.split('~').slice(1, -1).find((d) => (JSON.parse(Buffer.from(d, 'base64url').toString()) as [string, { vct: string }])[1].vct === 'mandate.payment.open')!;

export interface L3Options { amount: number; nonce: string; iat: number; key?: string; kid?: string; over?: Record<string, unknown>; mandate?: Record<string, unknown>; sdHash?: string; txFor?: string }
/** One purchase: canonical JSON {checkout_jwt, payment}, the L3a signed by the agent (or another key). */
export async function purchase(o: L3Options): Promise<Uint8Array> {
  const checkoutJwt = await new CompactSign(new TextEncoder().encode(JSON.stringify({ merchant: PAYEE, nonce: o.nonce, total: o.amount })))
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).sign(await importJWK(keys['other']!.private, 'ES256'));
  const final = { vct: 'mandate.payment', payment_instrument: { type: 'mastercard.srcDigitalCard', id: 'f199c3dd' }, payment_amount: { amount: o.amount, currency: 'USD' }, payee: PAYEE, transaction_id: b64sha(o.txFor ?? checkoutJwt), ...o.mandate };
  const inst = new SDJwtInstance<Record<string, unknown>>({ signer: await ES256.getSigner(keys[o.key ?? 'agent']!.private), signAlg: 'ES256', hasher: (d, a) => digest(d, a ?? 'sha-256'), hashAlg: 'sha-256', saltGenerator: generateSalt });
  const sd_hash = o.sdHash ?? b64sha(`${cred.l2.split('~')[0]}~${paymentDisclosure}~`);
  const l3 = await inst.issue({ nonce: o.nonce, aud: AUD, iat: o.iat, exp: o.iat + 300, sd_hash, delegate_payload: [final], ...o.over }, { delegate_payload: { _sd: [0] } } as never, { header: { typ: 'kb-sd-jwt', kid: o.kid ?? 'agent-key-1' } });
  return new TextEncoder().encode(JSON.stringify({ checkout_jwt: checkoutJwt, payment: l3 }));
}

/** The `vi` member of a session spec under the credential. */
export const viSpec = (): Record<string, unknown> => ({ l1: cred.l1, l2: cred.l2, issuer: keys['issuer']!.public, audience: AUD });
