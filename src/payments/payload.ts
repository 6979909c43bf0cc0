/**
 * The bytes a payment turn carries, read strictly (refuse, never repair). A payment turn's
 * authored bytes are the canonical JSON (docs/PROTOCOL.md §2) of
 *
 * ```json
 * {"x402":{"agent_id":"alpha","offer":"o-7","payload":<x402 v2 PaymentPayload>,"retry_of":1}}
 * ```
 *
 * (`retry_of` optional) where the PaymentPayload is the `exact` scheme's EIP-3009 form:
 * `{x402Version: 2, accepted, payload: {authorization: {from, to, value, validAfter, validBefore,
 * nonce}, signature}, resource?, extensions?}`. Bytes that parse as JSON with no `x402` member
 * are not payment turns; bytes with one that breaks a rule are refused `payment_malformed`.
 */
import { canonicalJson, parseStrictJson, tryCanonicalJson, type CanonicalObject } from '../protocol/index.js';
import type { PaymentRefusalCode } from './codes.js';
import { atomicAmount, chainIdOf } from './spec.js';

/** The EIP-3009 authorization, as signed (addresses as carried). */
export interface Authorization {
  readonly from: string;
  readonly to: string;
  readonly value: bigint;
  readonly validAfter: bigint;
  readonly validBefore: bigint;
  /** 0x + 64 lowercase or uppercase hex, as carried. */
  readonly nonce: string;
}

/** A payment requirement (`accepted`, or one of an offer's `accepts`). */
export interface Requirement {
  readonly scheme: string;
  readonly network: string;
  readonly asset: string;
  readonly amount: string;
  readonly payTo: string;
  readonly maxTimeoutSeconds: number;
  readonly extra: CanonicalObject;
}

/** A parsed payment turn. */
export interface PaymentTurn {
  readonly agentId: string;
  readonly offer: string;
  readonly retryOf: number | undefined;
  /** The PaymentPayload as carried (canonical JSON object). */
  readonly payload: CanonicalObject;
  readonly accepted: Requirement;
  /** Canonical JSON of `accepted`: what offer_drift compares. */
  readonly acceptedJson: string;
  readonly authorization: Authorization;
  readonly signature: string;
  /** The x402 `payment-identifier` extension's `info.id`, when the payload carries one. */
  readonly paymentId: string | undefined;
  /** EIP-712 domain from `accepted`: `extra.name`, `extra.version`, the network's chain id, the asset. */
  readonly domain: { readonly name: string; readonly version: string; readonly chainId: number; readonly verifyingContract: string };
}

export type PaymentParse = { ok: true; turn: PaymentTurn } | { ok: false; code: PaymentRefusalCode; message: string; agentId?: string; payload?: CanonicalObject };

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const NONCE = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
const ID = /^[\x21-\x7e]{1,64}$/;
/** x402's payment-identifier rule (@x402/extensions): 16–128 of `[A-Za-z0-9_-]`. */
const PAYMENT_ID = /^[A-Za-z0-9_-]{16,128}$/;

/** The payment id of a payload's `extensions["payment-identifier"].info.id`: undefined when absent, null when malformed. */
function paymentIdOf(extensions: unknown): string | undefined | null {
  if (extensions === undefined) return undefined;
  if (!isObject(extensions)) return null;
  const ext = extensions['payment-identifier'];
  if (ext === undefined) return undefined;
  if (!isObject(ext) || !isObject(ext['info'])) return null;
  const id = ext['info']['id'];
  if (id === undefined) return undefined;
  return typeof id === 'string' && PAYMENT_ID.test(id) ? id : null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function keys(o: Record<string, unknown>, where: string, required: readonly string[], optional: readonly string[] = []): string | undefined {
  for (const k of required) if (!Object.hasOwn(o, k)) return `${where}: missing "${k}"`;
  for (const k of Object.keys(o)) if (!required.includes(k) && !optional.includes(k)) return `${where}: unknown member "${k}"`;
  return undefined;
}

/** Reads a requirement; a problem string when it is not one. */
export function readRequirement(v: unknown, where: string): Requirement | string {
  if (!isObject(v)) return `${where} must be an object`;
  const k = keys(v, where, ['scheme', 'network', 'asset', 'amount', 'payTo', 'maxTimeoutSeconds', 'extra']);
  if (k) return k;
  for (const f of ['scheme', 'network', 'asset', 'amount', 'payTo'] as const) if (typeof v[f] !== 'string') return `${where}.${f} must be a string`;
  const t = v['maxTimeoutSeconds'];
  if (typeof t !== 'number' || !Number.isSafeInteger(t) || t < 0) return `${where}.maxTimeoutSeconds must be a non-negative integer`;
  if (!isObject(v['extra'])) return `${where}.extra must be an object`;
  return v as unknown as Requirement;
}

/** Whether `bytes` carry a payment turn (a JSON object with an `x402` member): cheap, before any check. */
export function carriesPayment(bytes: Uint8Array): boolean {
  // The member name's bytes must occur; a full parse decides.
  const needle = [0x22, 0x78, 0x34, 0x30, 0x32, 0x22]; // "x402"
  outer: for (let i = 0; i + needle.length <= bytes.length; i++) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/**
 * Parses authored bytes as a payment turn: `undefined` when they carry none, else the turn
 * or the refusal (`payment_malformed` / `scheme_unsupported`).
 */
export function parsePaymentTurn(bytes: Uint8Array): PaymentParse | undefined {
  if (!carriesPayment(bytes)) return undefined;
  const j = parseStrictJson(bytes);
  if (!j.ok || !isObject(j.value) || !Object.hasOwn(j.value, 'x402')) return undefined;
  const bad = (message: string, code: PaymentRefusalCode = 'payment_malformed', extra: { agentId?: string; payload?: CanonicalObject } = {}): PaymentParse => ({ ok: false, code, message, ...extra });
  const c = tryCanonicalJson(j.value);
  if (!c.ok || c.text !== new TextDecoder().decode(bytes)) return bad('a payment turn must be canonical JSON (docs/PROTOCOL.md §2)');
  const k0 = keys(j.value, 'turn', ['x402']);
  if (k0) return bad(k0);
  const x = j.value['x402'];
  if (!isObject(x)) return bad('x402 must be an object');
  const k1 = keys(x, 'x402', ['agent_id', 'offer', 'payload'], ['retry_of']);
  if (k1) return bad(k1);
  if (typeof x['agent_id'] !== 'string' || !ID.test(x['agent_id'])) return bad('x402.agent_id must be 1–64 printable ASCII characters');
  const agentId = x['agent_id'];
  if (typeof x['offer'] !== 'string' || !ID.test(x['offer'])) return bad('x402.offer must be 1–64 printable ASCII characters', 'payment_malformed', { agentId });
  const r = x['retry_of'];
  if (r !== undefined && (typeof r !== 'number' || !Number.isSafeInteger(r) || r < 1)) return bad('x402.retry_of must be a ticket id (a positive integer)', 'payment_malformed', { agentId });
  const p = x['payload'];
  if (!isObject(p)) return bad('x402.payload must be an object (an x402 PaymentPayload)', 'payment_malformed', { agentId });
  const payload = p as CanonicalObject;
  const withIds = { agentId, payload };
  if (p['x402Version'] !== 2) return bad('only x402 version 2 payloads are accepted', 'scheme_unsupported', withIds);
  const k2 = keys(p, 'payload', ['x402Version', 'accepted', 'payload'], ['resource', 'extensions']);
  if (k2) return bad(k2, 'payment_malformed', withIds);
  const accepted = readRequirement(p['accepted'], 'payload.accepted');
  if (typeof accepted === 'string') return bad(accepted, 'payment_malformed', withIds);
  if (accepted.scheme !== 'exact') return bad(`scheme ${JSON.stringify(accepted.scheme.slice(0, 32))} is not supported (only "exact")`, 'scheme_unsupported', withIds);
  const chainId = chainIdOf(accepted.network);
  if (chainId === undefined) return bad(`network ${JSON.stringify(accepted.network.slice(0, 40))} is not an eip155 network`, 'scheme_unsupported', withIds);
  const extra = accepted.extra as Record<string, unknown>;
  if (extra['assetTransferMethod'] !== undefined && extra['assetTransferMethod'] !== 'eip3009') return bad('only the EIP-3009 transfer method is supported', 'scheme_unsupported', withIds);
  if (typeof extra['name'] !== 'string' || typeof extra['version'] !== 'string') return bad('payload.accepted.extra must carry the EIP-712 domain name and version', 'payment_malformed', withIds);
  if (!ADDRESS.test(accepted.asset) || !ADDRESS.test(accepted.payTo)) return bad('payload.accepted.asset and payTo must be 20-byte hex addresses', 'payment_malformed', withIds);
  const inner = p['payload'];
  if (!isObject(inner)) return bad('payload.payload must be an object', 'payment_malformed', withIds);
  const k3 = keys(inner, 'payload.payload', ['authorization', 'signature']);
  if (k3) return bad(k3, 'payment_malformed', withIds);
  const a = inner['authorization'];
  if (!isObject(a)) return bad('payload.payload.authorization must be an object', 'payment_malformed', withIds);
  const k4 = keys(a, 'authorization', ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce']);
  if (k4) return bad(k4, 'payment_malformed', withIds);
  if (typeof a['from'] !== 'string' || !ADDRESS.test(a['from']) || typeof a['to'] !== 'string' || !ADDRESS.test(a['to'])) return bad('authorization.from and to must be 20-byte hex addresses', 'payment_malformed', withIds);
  const value = atomicAmount(a['value']);
  const validAfter = atomicAmount(a['validAfter']);
  const validBefore = atomicAmount(a['validBefore']);
  if (value === undefined || validAfter === undefined || validBefore === undefined) return bad('authorization.value, validAfter and validBefore must be decimal integer strings (uint256)', 'payment_malformed', withIds);
  if (typeof a['nonce'] !== 'string' || !NONCE.test(a['nonce'])) return bad('authorization.nonce must be 32 bytes of 0x-prefixed hex', 'payment_malformed', withIds);
  if (typeof inner['signature'] !== 'string' || !SIGNATURE.test(inner['signature'])) return bad('payload.payload.signature must be 65 bytes of 0x-prefixed hex (r ‖ s ‖ v)', 'payment_malformed', withIds);
  const paymentId = paymentIdOf(p['extensions']);
  if (paymentId === null) return bad('extensions["payment-identifier"].info.id must be 16–128 characters of [A-Za-z0-9_-]', 'payment_malformed', withIds);
  return {
    ok: true,
    turn: {
      agentId,
      offer: x['offer'],
      retryOf: r as number | undefined,
      payload,
      accepted,
      acceptedJson: canonicalJson(accepted as unknown as CanonicalObject),
      authorization: { from: a['from'], to: a['to'], value, validAfter, validBefore, nonce: a['nonce'] },
      signature: inner['signature'],
      paymentId,
      domain: { name: extra['name'], version: extra['version'], chainId, verifyingContract: accepted.asset },
    },
  };
}

/** One offer a frame carries: the PaymentRequired the runtime observed, under an id the turn names. */
export interface Offer {
  readonly id: string;
  /** Canonical JSON of each of its `accepts`, in order. */
  readonly accepts: readonly string[];
}

/**
 * The offers of a frame's `data.x402.offers`: `[{id, required: <PaymentRequired>}]`.
 * An offer that is not of this shape is not an offer (so nothing can be paid against it).
 */
export function offersOf(data: unknown): Offer[] {
  if (!isObject(data) || !isObject(data['x402'])) return [];
  const list = data['x402']['offers'];
  if (!Array.isArray(list)) return [];
  const out: Offer[] = [];
  for (const o of list) {
    if (!isObject(o) || typeof o['id'] !== 'string' || !isObject(o['required'])) continue;
    const accepts = o['required']['accepts'];
    if (o['required']['x402Version'] !== 2 || !Array.isArray(accepts)) continue;
    out.push({ id: o['id'], accepts: accepts.filter(isObject).map((a) => canonicalJson(a as CanonicalObject)) });
  }
  return out;
}
