/** Offline fixtures for the payment referee: public Hardhat keys, an offer, signed payloads, and a desk driven one wake at a time. */
import { privateKeyToAccount } from 'viem/accounts';
import { canonicalJson, utf8, type CanonicalObject, type CanonicalValue, type SessionSpec } from '../../src/protocol/index.js';
import { AUTHORIZATION_USED_TOPIC, TRANSFER_TOPIC, TRANSFER_WITH_AUTHORIZATION_TYPES, type PaymentsRuler, type PaymentsRuling, type ReceiptEvidence } from '../../src/payments/index.js';
import { Engine } from '../../src/session/index.js';
import { MemoryStore, type TranscriptStore } from '../../src/store/index.js';
import { mandate, signSpecSync } from '../referee/fixtures.js';
import { paymentsDesk } from './replay.js';

export const KEY_AGENT = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const; // Hardhat #1
export const KEY_STRANGER = '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a' as const; // Hardhat #4
export const agent = privateKeyToAccount(KEY_AGENT);
export const strangerAccount = privateKeyToAccount(KEY_STRANGER);
export const PAYEE = '0x90F79bf6EB2c4f870365E785982E1f101E93b906'; // Hardhat #3
export const STRANGER = strangerAccount.address;
/** The first contract Hardhat account #0 deploys on a fresh chain. */
export const ASSET = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
export const NETWORK = 'eip155:31337';
/** 2030-01-01T00:00:00Z: frame k is at T0 + (k + 1) minutes. */
export const T0 = 1_893_456_000_000;
export const frameAt = (ordinal: number): number => T0 + (ordinal + 1) * 60_000;
export const secs = (ms: number): bigint => BigInt(Math.floor(ms / 1000));

/** An x402 v2 `exact` requirement on the local token. */
export function requirement(over: Record<string, unknown> = {}): CanonicalObject {
  return { scheme: 'exact', network: NETWORK, asset: ASSET, amount: '10000', payTo: PAYEE, maxTimeoutSeconds: 120, extra: { name: 'Tally USD', version: '2' }, ...over } as CanonicalObject;
}

/** The PaymentRequired of a 402 answer offering `accepts`. */
export function paymentRequired(accepts: readonly CanonicalObject[] = [requirement()]): CanonicalObject {
  return { x402Version: 2, error: 'Payment required', resource: { url: 'http://127.0.0.1:8402/market-data', description: 'One snapshot of the desk market', mimeType: 'application/json' }, accepts: [...accepts] };
}

export interface SignInput {
  readonly accepted?: CanonicalObject;
  readonly key?: `0x${string}`;
  readonly from?: string;
  readonly to?: string;
  readonly value?: string;
  readonly validAfter?: bigint;
  readonly validBefore?: bigint;
  /** 32-byte nonce; default derived from `seq`. */
  readonly nonce?: `0x${string}`;
  readonly seq?: number;
  /** When signing the authorization, use this domain instead of the accepted one's. */
  readonly domain?: { name: string; version: string; chainId: number; verifyingContract: `0x${string}` };
}

export const nonceOf = (seq: number): `0x${string}` => `0x${seq.toString(16).padStart(64, '0')}`;

/** A signed x402 v2 PaymentPayload (exact, EIP-3009), signed as @x402/evm's client signs it. */
export async function signPayment(i: SignInput = {}, now = frameAt(-1)): Promise<CanonicalObject> {
  const accepted = i.accepted ?? requirement();
  const account = privateKeyToAccount(i.key ?? KEY_AGENT);
  const a = accepted as Record<string, unknown>;
  const extra = a['extra'] as { name: string; version: string };
  const authorization = {
    from: i.from ?? account.address,
    to: i.to ?? (a['payTo'] as string),
    value: i.value ?? (a['amount'] as string),
    validAfter: (i.validAfter ?? secs(now) - 600n).toString(),
    validBefore: (i.validBefore ?? secs(now) + 3600n).toString(),
    nonce: i.nonce ?? nonceOf(i.seq ?? 1),
  };
  const chainId = Number(String(a['network']).split(':')[1]);
  const signature = await account.signTypedData({
    domain: i.domain ?? { name: extra.name, version: extra.version, chainId, verifyingContract: a['asset'] as `0x${string}` },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: { from: authorization.from as `0x${string}`, to: authorization.to as `0x${string}`, value: BigInt(authorization.value), validAfter: BigInt(authorization.validAfter), validBefore: BigInt(authorization.validBefore), nonce: authorization.nonce },
  });
  return { x402Version: 2, resource: (paymentRequired() as { resource: CanonicalObject }).resource, accepted, payload: { authorization, signature } } as CanonicalObject;
}

/** The authored bytes of a payment turn. */
export function payTurn(payload: CanonicalObject, o: { agentId?: string; offer?: string; retryOf?: number } = {}): Uint8Array {
  return utf8(canonicalJson({ x402: { agent_id: o.agentId ?? 'payer', offer: o.offer ?? 'o-1', payload, ...(o.retryOf === undefined ? {} : { retry_of: o.retryOf }) } }));
}

/** A payment policy; `asset` replaces members of the one asset entry. */
export function policy(asset: Record<string, unknown> = {}, payees: readonly string[] = [PAYEE]): CanonicalObject {
  return { version: 1, assets: [{ network: NETWORK, asset: ASSET, decimals: 6, per_payment_cap: '20000', budget: '50000', ...asset }], payees: [...payees] } as CanonicalObject;
}

/** A signed spec with the payment policy `p`. */
export function paySpec(name: string, p: CanonicalObject = policy()): SessionSpec {
  return signSpecSync({ name, agents: { payer: agent.address, other: strangerAccount.address }, mandate: mandate({ starts_at: T0 - 60_000, expires_at: T0 + 86_400_000 }) as CanonicalObject, payments: p });
}

/** The synthetic receipt of `payload` settled in `transaction` (as eth_getTransactionReceipt would give it, lowercased). */
export function receiptOf(payload: CanonicalObject, transaction = `0x${'ab'.repeat(32)}`, over: { nonce?: string; value?: string } = {}): ReceiptEvidence {
  const auth = (payload['payload'] as { authorization: Record<string, string> }).authorization;
  const asset = String((payload['accepted'] as Record<string, unknown>)['asset']).toLowerCase();
  const word = (a: string) => `0x${'0'.repeat(24)}${a.slice(2).toLowerCase()}`;
  return {
    transaction,
    status: 'success',
    logs: [
      { address: asset, topics: [AUTHORIZATION_USED_TOPIC, word(auth['from']!), (over.nonce ?? auth['nonce']!).toLowerCase()], data: '0x' },
      { address: asset, topics: [TRANSFER_TOPIC, word(auth['from']!), word(auth['to']!)], data: `0x${BigInt(over.value ?? auth['value']!).toString(16).padStart(64, '0')}` },
    ],
  };
}

export const x402Of = (ruling: unknown): PaymentsRuling => ((ruling ?? {}) as { x402?: PaymentsRuling }).x402 ?? {};

/** A payment session driven one wake at a time: each wake is a frame (offers, settlements) and its turn. */
export class PayDesk {
  ordinal = -1;
  private constructor(
    readonly engine: Engine,
    readonly ruler: PaymentsRuler,
    readonly sid: string,
  ) {}

  /** `wrap`: the ruler the engine is given instead (a lying referee, in the tests that catch one). */
  static async open(spec: SessionSpec = paySpec('pay-desk'), store: TranscriptStore = new MemoryStore(), judges: Parameters<typeof paymentsDesk>[1] = {}, wrap?: (r: PaymentsRuler) => PaymentsRuler): Promise<PayDesk> {
    const desk = paymentsDesk(store, judges);
    const ruler = wrap ? wrap(desk.ruler) : desk.ruler;
    const engine = wrap ? new Engine({ store, ruler }) : desk.engine;
    const o = await engine.open(spec);
    if (!o.ok) throw new Error(o.message);
    return new PayDesk(engine, ruler, o.sessionId);
  }

  /** One wake: a frame carrying `offers` (id o-<ordinal>…) and `settlements`, answered by `body` (default stand-down). */
  async wake(o: { offers?: readonly CanonicalObject[]; settlements?: readonly CanonicalValue[]; body?: Uint8Array; time?: number } = {}) {
    const ord = this.ordinal++;
    const x402: Record<string, CanonicalValue> = {};
    if (o.offers) x402['offers'] = o.offers.map((required, i) => ({ id: i === 0 ? `o-${ord}` : `o-${ord}-${i}`, required }));
    if (o.settlements) x402['settlements'] = [...o.settlements];
    const f = await this.engine.frame({ sessionId: this.sid, ordinal: ord, time: o.time ?? frameAt(ord), ...(Object.keys(x402).length ? { data: { x402 } } : {}) });
    if (!f.ok) throw new Error(f.message);
    const body = o.body ? { kind: 'authored' as const, bytes: o.body } : { kind: 'stand-down' as const, failureClass: 'timeout' as const };
    const t = await this.engine.turn({ sessionId: this.sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body });
    if (!t.ok) throw new Error(t.message);
    return { ...t, ordinal: ord, offer: `o-${ord}`, x402: x402Of(t.ruling) };
  }

  /** One wake that offers `required` and pays `payload` against it. */
  async pay(payload: CanonicalObject, o: { required?: CanonicalObject; settlements?: readonly CanonicalValue[]; agentId?: string; retryOf?: number; offer?: string; time?: number } = {}) {
    const offer = o.offer ?? `o-${this.ordinal}`;
    return this.wake({ offers: [o.required ?? paymentRequired([payload['accepted'] as CanonicalObject])], ...(o.settlements ? { settlements: o.settlements } : {}), ...(o.time === undefined ? {} : { time: o.time }), body: payTurn(payload, { offer, ...(o.agentId ? { agentId: o.agentId } : {}), ...(o.retryOf === undefined ? {} : { retryOf: o.retryOf }) }) });
  }
}
