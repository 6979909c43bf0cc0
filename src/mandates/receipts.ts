/**
 * The other parties' signed answers (PROTOCOL.md §16.8): the merchant's
 * checkout JWT, and the checkout, payment and mandate receipt JWTs (AP2 v0.2
 * schemas `checkout_receipt`, `payment_receipt`, agent_authorization.md's
 * Mandate Receipt). Each is an ES256 JWS verified with jose under the key the
 * session spec pins for its party; authority is that key, the `iss` must then
 * be the name pinned beside it. Refusals are results with stable codes.
 */
import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { parseStrictJson } from '../protocol/index.js';
import { refuse, type MandateResult } from './codes.js';
import { utf8Text } from './digest.js';
import { publicP256 } from './open.js';
import { canonicalB64url, exactNumbers } from './sdjwt.js';

/** A party pinned by the spec: the `iss` it signs as, and its key. */
export interface Party { readonly iss: string; readonly key: JWK }
/** The two parties an AP2 payment session answers to. */
export interface Parties { readonly merchant: Party; readonly provider: Party }

export const RECEIPT_TYPES = ['checkout', 'payment', 'mandate'] as const;
export type ReceiptType = (typeof RECEIPT_TYPES)[number];

/** A receipt after every check. */
export interface VerifiedReceipt {
  readonly type: ReceiptType;
  readonly iss: string;
  readonly iat: number;
  /** base64url SHA-256 of what it answers (§16.8). */
  readonly reference: string;
  /** `Success`/`Error` (checkout, payment) or `success`/`error` (mandate), as signed. */
  readonly status: string;
  readonly claims: Readonly<Record<string, unknown>>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const REF = /^[A-Za-z0-9_-]{43}$/;

/** A spec's `{iss, key}` member, or undefined. */
export function readParty(v: unknown): Party | undefined {
  if (!isObject(v) || Object.keys(v).length !== 2 || typeof v.iss !== 'string' || v.iss === '') return undefined;
  const key = publicP256(v.key);
  return key ? { iss: v.iss, key } : undefined;
}

async function verifiesUnder(jws: string, key: JWK): Promise<Uint8Array | undefined> {
  try {
    return (await compactVerify(jws, await importJWK(key, 'ES256'), { algorithms: ['ES256'] })).payload;
  } catch {
    return undefined;
  }
}

/** Header exactly {alg: ES256, typ?: JWT, kid?: string}; canonical base64url segments. */
function wellFormed(jws: string): boolean {
  if (!JWS.test(jws) || jws.split('.').some((s) => canonicalB64url(s) === undefined)) return false;
  try {
    const h = decodeProtectedHeader(jws) as Record<string, unknown>;
    return h.alg === 'ES256' && (h.typ === undefined || h.typ === 'JWT') && (h.kid === undefined || typeof h.kid === 'string') && Object.keys(h).every((k) => ['alg', 'typ', 'kid'].includes(k));
  } catch {
    return false;
  }
}

function strictObject(bytes: Uint8Array): Record<string, unknown> | undefined {
  const r = parseStrictJson(bytes);
  return r.ok && isObject(r.value) && exactNumbers(utf8Text(bytes)) ? r.value : undefined;
}

/** The merchant's signature on a checkout JWT (AP2: "the merchant-signed JWT containing the details of the checkout"). */
export async function verifyCheckoutJwt(checkoutJwt: string, merchant: Party): Promise<MandateResult<Readonly<Record<string, unknown>>>> {
  if (!wellFormed(checkoutJwt)) return refuse('checkout-signature', 'checkout_jwt is not a compact ES256 JWS with header {alg, typ?: "JWT", kid?}');
  const payload = await verifiesUnder(checkoutJwt, merchant.key);
  if (!payload) return refuse('checkout-signature', "checkout_jwt is not signed by the merchant's pinned key");
  const claims = strictObject(payload);
  if (!claims) return refuse('checkout-signature', 'the checkout_jwt payload is not a strict JSON object');
  return { ok: true, value: claims };
}

const str = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** Members each receipt type requires beyond iss, iat, reference and its status (AP2 v0.2 schemas). */
function shapeError(type: ReceiptType, c: Record<string, unknown>): string | undefined {
  if (type === 'mandate') {
    if (c.result !== 'success' && c.result !== 'error') return 'a mandate receipt has result "success" or "error"';
    if (c.result === 'error' && !str(c.error)) return 'an error mandate receipt carries error';
    return undefined;
  }
  if (c.status !== 'Success' && c.status !== 'Error') return `a ${type} receipt has status "Success" or "Error"`;
  if (c.status === 'Error' && (!str(c.error) || !str(c.error_description))) return `an Error ${type} receipt carries error and error_description`;
  if (type === 'checkout' && c.status === 'Success' && !str(c.order_id)) return 'a Success checkout receipt carries order_id';
  if (type === 'payment' && !str(c.payment_id)) return 'a payment receipt carries payment_id';
  if (type === 'payment' && c.status === 'Success' && (!str(c.psp_confirmation_id) || !str(c.network_confirmation_id))) return 'a Success payment receipt carries psp_confirmation_id and network_confirmation_id';
  return undefined;
}

/** Who signs each receipt type: the merchant its checkout receipts, the credential provider (the KB-JWT's audience) the rest. */
export const signerOf = (type: ReceiptType): keyof Parties => (type === 'checkout' ? 'merchant' : 'provider');

/**
 * Verifies one receipt of `type`, in the order §16.8 states: form, the
 * signature under its party's key (a signature under the other party's key is
 * `receipt-issuer`), strict JSON, `iss` = the party's pinned name, integer
 * `iat`, a 43-character base64url `reference`, then the type's members.
 */
export async function verifyReceipt(type: ReceiptType, jws: string, parties: Parties): Promise<MandateResult<VerifiedReceipt>> {
  if (!wellFormed(jws)) return refuse('receipt-malformed', 'a receipt is a compact ES256 JWS with header {alg, typ?: "JWT", kid?}');
  const party = parties[signerOf(type)];
  const payload = await verifiesUnder(jws, party.key);
  if (!payload) {
    const other = parties[signerOf(type) === 'merchant' ? 'provider' : 'merchant'];
    if (await verifiesUnder(jws, other.key)) return refuse('receipt-issuer', `a ${type} receipt is signed by the ${signerOf(type) === 'merchant' ? 'provider' : 'merchant'}, not the ${signerOf(type)}`);
    return refuse('receipt-signature', `the ${type} receipt is not signed by the ${signerOf(type)}'s pinned key`);
  }
  const c = strictObject(payload);
  if (!c) return refuse('receipt-malformed', 'the receipt payload is not a strict JSON object');
  if (c.iss !== party.iss) return refuse('receipt-issuer', `the receipt's iss ${JSON.stringify(c.iss)} is not ${JSON.stringify(party.iss)}, the name pinned beside the key`);
  if (!Number.isSafeInteger(c.iat) || typeof c.reference !== 'string' || !REF.test(c.reference)) return refuse('receipt-malformed', 'a receipt carries integer iat and a base64url SHA-256 reference');
  const shape = shapeError(type, c);
  if (shape) return refuse('receipt-malformed', shape);
  const status = (type === 'mandate' ? c.result : c.status) as string;
  return { ok: true, value: { type, iss: c.iss, iat: c.iat as number, reference: c.reference, status, claims: c } };
}

/** One receipt as a frame carries it: `{type, jwt}`. */
export interface CarriedReceipt { readonly type: ReceiptType; readonly jwt: string }

/** The receipts a frame's data carries (`data.ap2.receipts`), or a refusal when the member is there but malformed. */
export function carriedReceipts(frameData: unknown): MandateResult<readonly CarriedReceipt[]> {
  const a = isObject(frameData) ? frameData['ap2'] : undefined;
  if (a === undefined) return { ok: true, value: [] };
  const list = isObject(a) && Object.keys(a).length === 1 ? a['receipts'] : undefined;
  if (!Array.isArray(list) || !list.every((r) => isObject(r) && Object.keys(r).length === 2 && RECEIPT_TYPES.includes(r['type'] as ReceiptType) && typeof r['jwt'] === 'string')) {
    return refuse('receipt-malformed', 'frame data ap2 is {receipts: [{type: "checkout"|"payment"|"mandate", jwt}]}');
  }
  return { ok: true, value: list as unknown as CarriedReceipt[] };
}
