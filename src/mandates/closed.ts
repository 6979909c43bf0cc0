/**
 * Closed mandates: the agent's KB-JWT (RFC 9901 §4.3) over a presentation of
 * the open mandate, carrying the closed checkout or payment mandate in its
 * payload. Checked: the presentation is the open mandate's own issuer JWT with
 * a subset of its released disclosures; the KB-JWT is signed by the cnf key;
 * `sd_hash` is the digest of the presentation; iat/aud/nonce; the closed
 * mandate's type and fields; and for a payment, `transaction_id` is the
 * `checkout_hash` of a checkout mandate the caller already admitted.
 */
import { compactVerify, importJWK } from 'jose';
import { parseStrictJson } from '../protocol/index.js';
import { refuse, type MandateResult } from './codes.js';
import { utf8Text } from './digest.js';
import type { Merchant, PaymentRequest } from './constraints.js';
import { b64sha256, type OpenMandate } from './open.js';
import { canonicalB64url, exactNumbers, splitCompact } from './sdjwt.js';

export const CLOSED_VCT = { payment: 'mandate.payment.1', checkout: 'mandate.checkout.1' } as const;

export type ClosedMandate =
  | { readonly kind: 'payment'; readonly transactionId: string; readonly request: PaymentRequest; readonly claims: Readonly<Record<string, unknown>> }
  | { readonly kind: 'checkout'; readonly checkoutHash: string; readonly checkoutJwt: string; readonly claims: Readonly<Record<string, unknown>> };

export interface ClosedOptions {
  /** Frame time, Unix seconds. */
  readonly now: number;
  /** The audience the KB-JWT must name (the verifier: merchant or credential provider). */
  readonly aud: string;
  /** The nonce the verifier issued, when one was issued. */
  readonly nonce?: string;
  /** checkout_hash values of checkout mandates admitted so far; a payment must name one. */
  readonly checkoutHashes?: ReadonlySet<string>;
  /** The open checkout mandate's id, for payment.reference. */
  readonly openCheckoutHash?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

function strict(bytes: Uint8Array): unknown {
  const r = parseStrictJson(bytes);
  return r.ok && exactNumbers(utf8Text(bytes)) ? r.value : undefined;
}

function merchant(v: unknown): Merchant | undefined {
  if (!isObject(v) || typeof v.id !== 'string' || typeof v.name !== 'string' || (v.website !== undefined && typeof v.website !== 'string')) return undefined;
  return v.website === undefined ? { id: v.id, name: v.name } : { id: v.id, name: v.name, website: v.website as string };
}

/** Verifies a closed mandate (`<jwt>~<d>~…~<kb-jwt>`) against the open mandate it uses. */
export async function verifyClosedMandate(presentation: string, open: OpenMandate, opts: ClosedOptions): Promise<MandateResult<ClosedMandate>> {
  const split = splitCompact(presentation);
  if (!split.ok) return split;
  const { jwt, disclosures, kb } = split.value;
  if (kb === '') return refuse('kb-encoding', 'a closed mandate ends in its key-binding JWT');
  if (jwt !== open.sdjwt.jwt) return refuse('kb-sd-hash', 'the presentation carries another issuer JWT than the open mandate');
  const released = new Set(open.sdjwt.disclosures);
  if (disclosures.some((d) => !released.has(d)) || new Set(disclosures).size !== disclosures.length) return refuse('kb-sd-hash', 'the presentation discloses what the open mandate did not release');
  const [h64, p64] = kb.split('.') as [string, string, string];
  const header = strict(canonicalB64url(h64)!);
  if (!isObject(header) || header.typ !== 'kb+jwt' || header.alg !== 'ES256' || Object.keys(header).length !== 2) return refuse('kb-header', 'the KB-JWT header must be exactly {typ:"kb+jwt", alg:"ES256"}');
  try {
    await compactVerify(kb, await importJWK(open.agentKey, 'ES256'), { algorithms: ['ES256'] });
  } catch {
    return refuse('kb-signature', "the KB-JWT is not signed by the open mandate's cnf key");
  }
  const p = strict(canonicalB64url(p64)!);
  if (!isObject(p)) return refuse('kb-claims', 'the KB-JWT payload is not a strict JSON object');
  const sdPart = presentation.slice(0, presentation.length - kb.length);
  if (p.sd_hash !== b64sha256(sdPart)) return refuse('kb-sd-hash', 'sd_hash is not the SHA-256 of the presented SD-JWT');
  if (!Number.isSafeInteger(p.iat) || (p.iat as number) > opts.now || (p.iat as number) < open.iat) return refuse('kb-claims', 'KB-JWT iat must be an integer within [open iat, frame time]');
  if (p.aud !== opts.aud) return refuse('kb-claims', `KB-JWT aud must be ${JSON.stringify(opts.aud)}`);
  if (typeof p.nonce !== 'string' || (opts.nonce !== undefined && p.nonce !== opts.nonce)) return refuse('kb-claims', 'KB-JWT nonce missing or not the one issued');
  if (p.vct !== CLOSED_VCT[open.kind]) return refuse('closed-vct', `a closed mandate under ${open.kind === 'payment' ? 'mandate.payment.open.1' : 'mandate.checkout.open.1'} has vct ${CLOSED_VCT[open.kind]}`);
  if (open.kind === 'checkout') {
    if (typeof p.checkout_jwt !== 'string' || !JWS.test(p.checkout_jwt) || typeof p.checkout_hash !== 'string') return refuse('kb-claims', 'a checkout mandate carries checkout_jwt and checkout_hash');
    if (p.checkout_hash !== b64sha256(p.checkout_jwt)) return refuse('closed-transaction-id', 'checkout_hash is not the SHA-256 of checkout_jwt');
    return { ok: true, value: { kind: 'checkout', checkoutHash: p.checkout_hash, checkoutJwt: p.checkout_jwt, claims: p } };
  }
  const payee = merchant(p.payee);
  const amt = p.payment_amount;
  if (typeof p.transaction_id !== 'string' || !payee || !isObject(amt) || !Number.isSafeInteger(amt.amount) || (amt.amount as number) <= 0 || typeof amt.currency !== 'string' || !isObject(p.payment_instrument)) {
    return refuse('kb-claims', 'a payment mandate carries transaction_id, payee, payment_amount {amount > 0 minor units, currency}, payment_instrument');
  }
  if (p.execution_date !== undefined && !(typeof p.execution_date === 'string' && DATE.test(p.execution_date))) return refuse('kb-claims', 'execution_date is YYYY-MM-DD');
  if (opts.checkoutHashes && !opts.checkoutHashes.has(p.transaction_id)) return refuse('closed-transaction-id', 'transaction_id is the checkout_hash of no admitted checkout mandate');
  const request: PaymentRequest = {
    payee,
    amount: amt.amount as number,
    currency: amt.currency,
    ...(p.execution_date === undefined ? {} : { executionDate: p.execution_date as string }),
    ...(opts.openCheckoutHash === undefined ? {} : { openCheckoutHash: opts.openCheckoutHash }),
  };
  return { ok: true, value: { kind: 'payment', transactionId: p.transaction_id, request, claims: p } };
}
