/**
 * The payment policy of a session, sealed in genesis as `spec.payments` next to a version-2
 * mandate, so the principal's signature over the spec (referee/mandate-sig.ts) is its authority:
 *
 * ```json
 * "payments": {
 *   "version": 1,
 *   "assets": [{ "network": "eip155:31337", "asset": "0x…", "decimals": 6,
 *                "per_payment_cap": "20000", "budget": "50000" }],
 *   "payees": ["0x…"] }
 * ```
 *
 * Amounts are integers in the token's atomic units (`decimals` is the exponent: 20000 at
 * 6 decimals is 0.02), written as canonical decimal integer strings, never floats.
 */
import type { SessionSpec } from '../protocol/index.js';
import { judgingOf, type Judging } from '../referee/judging.js';
import { withoutFollowOns } from '../referee/mandate-checks.js';

/** One asset the session may pay with. */
export interface PaymentAsset {
  /** CAIP-2, `eip155:<chain id>`. */
  readonly network: string;
  readonly chainId: number;
  /** Lowercase token address. */
  readonly asset: string;
  readonly decimals: number;
  readonly perPaymentCap: bigint;
  readonly budget: bigint;
}

/** A checked payment policy. */
export interface PaymentPolicy {
  readonly version: 1;
  readonly assets: readonly PaymentAsset[];
  /** Lowercase payee addresses. */
  readonly payees: readonly string[];
  /** The judges every payment asks before money moves (docs/PROTOCOL.md §17.10); absent: no judge. */
  readonly judging?: Judging;
}

/** Bounds of a payment policy. */
export const PAYMENT_POLICY_LIMITS = Object.freeze({ maxAssets: 16, maxPayees: 64, maxDecimals: 36, maxAmountDigits: 78 });

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const ZERO = /^0x0{40}$/;
const NETWORK = /^eip155:([1-9][0-9]{0,15})$/;
const INTEGER = /^(0|[1-9][0-9]*)$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function exactKeys(o: Record<string, unknown>, where: string, keys: readonly string[], optional: readonly string[] = []): string | undefined {
  for (const k of keys) if (!Object.hasOwn(o, k)) return `${where}: missing "${k}"`;
  for (const k of Object.keys(o)) if (!keys.includes(k) && !optional.includes(k)) return `${where}: unknown member "${k}"`;
  return undefined;
}

/** The optional judging members of `spec.payments`, as the mandate spells them. */
const JUDGING_KEYS = ['rules', 'judges', 'panel', 'judge_request', 'judges_independent'] as const;

/** The chain id of a CAIP-2 `eip155:` network, or undefined. */
export function chainIdOf(network: unknown): number | undefined {
  if (typeof network !== 'string') return undefined;
  const m = NETWORK.exec(network);
  if (!m) return undefined;
  const id = Number(m[1]);
  return Number.isSafeInteger(id) ? id : undefined;
}

/** An atomic amount: a canonical decimal integer string of at most 78 digits (< 2^256 fits). */
export function atomicAmount(v: unknown): bigint | undefined {
  if (typeof v !== 'string' || v.length > PAYMENT_POLICY_LIMITS.maxAmountDigits || !INTEGER.test(v)) return undefined;
  const n = BigInt(v);
  return n < 1n << 256n ? n : undefined;
}

/** Parses `spec.payments`: the policy, `undefined` when absent, or a problem. */
export function parsePaymentPolicy(spec: SessionSpec): { ok: true; policy: PaymentPolicy | undefined } | { ok: false; problem: string } {
  const p = spec['payments'];
  if (p === undefined) return { ok: true, policy: undefined };
  const fail = (problem: string) => ({ ok: false as const, problem });
  if (!isObject(p)) return fail('spec.payments must be an object');
  const k = exactKeys(p, 'spec.payments', ['version', 'assets', 'payees'], JUDGING_KEYS);
  if (k) return fail(k);
  if (p['version'] !== 1) return fail('spec.payments.version must be 1');
  if (!isObject(spec['mandate'])) return fail('spec.payments needs a version-2 mandate (its principal signs the payment policy with the spec)');
  const assets = p['assets'];
  if (!Array.isArray(assets) || assets.length === 0 || assets.length > PAYMENT_POLICY_LIMITS.maxAssets) return fail(`spec.payments.assets must list 1–${PAYMENT_POLICY_LIMITS.maxAssets} assets`);
  const out: PaymentAsset[] = [];
  for (let i = 0; i < assets.length; i++) {
    const a: unknown = assets[i];
    const w = `spec.payments.assets[${i}]`;
    if (!isObject(a)) return fail(`${w} must be an object`);
    const ak = exactKeys(a, w, ['network', 'asset', 'decimals', 'per_payment_cap', 'budget']);
    if (ak) return fail(ak);
    const chainId = chainIdOf(a['network']);
    if (chainId === undefined) return fail(`${w}.network must be a CAIP-2 eip155 network ("eip155:<chain id>")`);
    if (typeof a['asset'] !== 'string' || !ADDRESS.test(a['asset']) || ZERO.test(a['asset'])) return fail(`${w}.asset must be a non-zero 0x-prefixed 20-byte hex address`);
    const d = a['decimals'];
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0 || d > PAYMENT_POLICY_LIMITS.maxDecimals) return fail(`${w}.decimals must be an integer from 0 to ${PAYMENT_POLICY_LIMITS.maxDecimals}`);
    const cap = atomicAmount(a['per_payment_cap']);
    const budget = atomicAmount(a['budget']);
    if (cap === undefined || cap === 0n) return fail(`${w}.per_payment_cap must be a positive integer string of atomic units`);
    if (budget === undefined || budget === 0n) return fail(`${w}.budget must be a positive integer string of atomic units`);
    const asset = a['asset'].toLowerCase();
    if (out.some((x) => x.network === a['network'] && x.asset === asset)) return fail(`${w}: the asset is listed twice`);
    out.push({ network: a['network'] as string, chainId, asset, decimals: d, perPaymentCap: cap, budget });
  }
  const payees = p['payees'];
  if (!Array.isArray(payees) || payees.length === 0 || payees.length > PAYMENT_POLICY_LIMITS.maxPayees) return fail(`spec.payments.payees must list 1–${PAYMENT_POLICY_LIMITS.maxPayees} addresses`);
  const ps: string[] = [];
  for (let i = 0; i < payees.length; i++) {
    const a: unknown = payees[i];
    if (typeof a !== 'string' || !ADDRESS.test(a) || ZERO.test(a)) return fail(`spec.payments.payees[${i}] must be a non-zero 0x-prefixed 20-byte hex address`);
    if (ps.includes(a.toLowerCase())) return fail(`spec.payments.payees[${i}] is listed twice`);
    ps.push(a.toLowerCase());
  }
  let judging: Judging | undefined;
  if (JUDGING_KEYS.some((k) => Object.hasOwn(p, k))) {
    if (p['rules'] === undefined) return fail('spec.payments.rules is required when the payment policy names judges (there is nothing to judge)');
    const problems: string[] = [];
    judging = judgingOf(p, 'spec.payments', 2, problems);
    if (judging === undefined) {
      const all = withoutFollowOns(problems);
      return fail(all.length === 1 ? all[0]! : `${all.length} problems in spec.payments: ${all.join('; ')}`);
    }
  }
  return { ok: true, policy: { version: 1, assets: out, payees: ps, ...(judging === undefined ? {} : { judging }) } };
}

const cache = new WeakMap<SessionSpec, ReturnType<typeof parsePaymentPolicy>>();

/** {@link parsePaymentPolicy}, once per sealed spec object. */
export function paymentPolicyOf(spec: SessionSpec): ReturnType<typeof parsePaymentPolicy> {
  let r = cache.get(spec);
  if (!r) cache.set(spec, (r = parsePaymentPolicy(spec)));
  return r;
}
