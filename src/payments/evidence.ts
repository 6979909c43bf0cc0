/**
 * Chain evidence of a settlement, checked offline against the authorization: the transaction
 * receipt a frame reports (`status` and `logs` as eth_getTransactionReceipt gives them) must hold,
 * emitted by the token, `AuthorizationUsed(authorizer = from, nonce)` and
 * `Transfer(from, to, value)`. EIP-3009 marks a nonce used exactly once per authorizer, so these
 * two logs can appear for one authorization in one transaction only.
 *
 * What this does not prove: that the receipt is in the chain (no block proof is checked); the
 * runtime reports it as it reports every other fact, and it is recorded byte for byte.
 */
import { keccak256, toHex as viemHex, type Hex } from 'viem';
import type { Authorization } from './payload.js';

/** topic0 of `AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)`. */
export const AUTHORIZATION_USED_TOPIC = keccak256(viemHex('AuthorizationUsed(address,bytes32)'));
/** topic0 of `Transfer(address indexed from, address indexed to, uint256 value)`. */
export const TRANSFER_TOPIC = keccak256(viemHex('Transfer(address,address,uint256)'));

const HASH = /^0x[0-9a-f]{64}$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const word = (address: string): string => `0x${'0'.repeat(24)}${address.slice(2).toLowerCase()}`;
const uint = (n: bigint): string => `0x${n.toString(16).padStart(64, '0')}`;

/** A receipt as carried: `{transaction, status, logs: [{address, topics, data}]}` (lowercase hex). */
export interface ReceiptEvidence {
  readonly transaction: string;
  readonly status: 'success' | 'reverted';
  readonly logs: readonly { readonly address: string; readonly topics: readonly string[]; readonly data: string }[];
}

/** Reads a carried receipt strictly; a problem string otherwise. */
export function readReceipt(v: unknown): ReceiptEvidence | string {
  if (!isObject(v)) return 'receipt must be an object';
  for (const k of Object.keys(v)) if (!['transaction', 'status', 'logs'].includes(k)) return `receipt: unknown member "${k}"`;
  if (typeof v['transaction'] !== 'string' || !HASH.test(v['transaction'])) return 'receipt.transaction must be a 32-byte lowercase 0x-hex hash';
  if (v['status'] !== 'success' && v['status'] !== 'reverted') return 'receipt.status must be "success" or "reverted"';
  const logs = v['logs'];
  if (!Array.isArray(logs) || logs.length > 256) return 'receipt.logs must be a list of at most 256 logs';
  for (const l of logs) {
    if (!isObject(l) || Object.keys(l).length !== 3 || typeof l['address'] !== 'string' || typeof l['data'] !== 'string' || !Array.isArray(l['topics'])) return 'each log must be {address, topics, data}';
    if (!/^0x[0-9a-f]{40}$/.test(l['address']) || !/^0x([0-9a-f]{2})*$/.test(l['data']) || l['topics'].length > 4 || !l['topics'].every((t) => typeof t === 'string' && HASH.test(t))) return 'log address, topics and data must be lowercase 0x-hex';
  }
  return v as unknown as ReceiptEvidence;
}

/** Whether `r` shows `a` settled on `asset` (lowercase): success, AuthorizationUsed and Transfer from the token. */
export function receiptSettles(r: ReceiptEvidence, asset: string, a: Authorization): boolean {
  if (r.status !== 'success') return false;
  const mine = r.logs.filter((l) => l.address === asset);
  const used = mine.some((l) => l.topics.length === 3 && l.topics[0] === AUTHORIZATION_USED_TOPIC && l.topics[1] === word(a.from) && l.topics[2] === a.nonce.toLowerCase());
  const moved = mine.some((l) => l.topics.length === 3 && l.topics[0] === TRANSFER_TOPIC && l.topics[1] === word(a.from) && l.topics[2] === word(a.to) && l.data === uint(a.value));
  return used && moved;
}

/** The carried form of a viem receipt (what a runtime puts in a frame). */
export function receiptEvidence(receipt: { transactionHash: Hex; status: 'success' | 'reverted'; logs: readonly { address: string; topics: readonly string[]; data: string }[] }): ReceiptEvidence {
  return {
    transaction: receipt.transactionHash.toLowerCase(),
    status: receipt.status,
    logs: receipt.logs.map((l) => ({ address: l.address.toLowerCase(), topics: l.topics.map((t) => t.toLowerCase()), data: l.data.toLowerCase() })),
  };
}
