/**
 * The principal's signature on a mandate (seed 003: a mandate is registered
 * by its principal, `principal = msg.sender`). A version-2 mandate carries
 * `signature: {scheme, value}`; what the principal signs is the exact spec
 * the session seals, with that one member removed:
 *
 * - `signed bytes` = canonical JSON (RFC 8785 on its domain, PROTOCOL.md §2) of
 *   the spec with `mandate.signature` deleted — the mandate's own bytes, and
 *   with them the agents it lets act and the day (`name`) it is for;
 * - `eip712`: EIP-712 typed data, domain `{name: "Tally mandate", version: "2"}`,
 *   primary type `Mandate(string instance,address principal,address operator,address executor,string spec)`
 *   with `spec` = the signed bytes as text (so a wallet shows the whole spec);
 * - `eip191`: personal_sign over the UTF-8 text `tally/referee/v2|mandate|` ‖ signed bytes.
 *
 * The signature is 65 bytes `r ‖ s ‖ v` with the rules of every other
 * signature here (low s, `v ∈ {27, 28}`) and must recover to
 * `mandate.principal`. Verification never throws.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { hashTypedData } from 'viem';
import { canonicalJson, fromHex, type CanonicalValue } from '../protocol/index.js';
import { eip191Digest } from '../intent/canonical.js';
import { accountOf, recoverDigest, type RefereeSigner } from './eip191.js';

/** The mandate version that carries a principal's signature (an absent `version` is 1: days sealed before, replay only). */
export const MANDATE_VERSION = 2;
/** The two ways a principal signs. */
export const MANDATE_SIGNATURE_SCHEMES = ['eip712', 'eip191'] as const;
/** One of {@link MANDATE_SIGNATURE_SCHEMES}. */
export type MandateSignatureScheme = (typeof MANDATE_SIGNATURE_SCHEMES)[number];

/** The EIP-712 domain of a mandate signature (no chain: Tally is not on one). */
export const MANDATE_EIP712_DOMAIN = Object.freeze({ name: 'Tally mandate', version: '2' });
/** The EIP-712 types of a mandate signature. */
export const MANDATE_EIP712_TYPES = Object.freeze({
  Mandate: [
    { name: 'instance', type: 'string' },
    { name: 'principal', type: 'address' },
    { name: 'operator', type: 'address' },
    { name: 'executor', type: 'address' },
    { name: 'spec', type: 'string' },
  ],
} as const);
/** The EIP-191 text prefix of a mandate signature. */
export const MANDATE_EIP191_PREFIX = 'tally/referee/v2|mandate|';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The signed bytes as text: canonical JSON of `spec` without `mandate.signature`.
 * Throws `TypeError` when the spec has no mandate object or is not canonical-encodable.
 */
export function mandateSignedText(spec: Readonly<Record<string, unknown>>): string {
  const m = spec['mandate'];
  if (!isObject(m)) throw new TypeError('spec.mandate must be an object');
  const { signature: _signature, ...rest } = m;
  return canonicalJson({ ...spec, mandate: rest } as CanonicalValue);
}

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/** The EIP-712 typed data a wallet signs for `spec` (`signTypedData` / `eth_signTypedData_v4` input). */
export function mandateTypedData(spec: Readonly<Record<string, unknown>>) {
  const m = spec['mandate'] as Record<string, unknown>;
  // A tool-only mandate has no operator or executor (§18.7): the zero address, which no mandate may name, stands for none.
  const lower = (k: string): `0x${string}` => (m[k] === undefined ? ZERO_ADDRESS : (String(m[k]).toLowerCase() as `0x${string}`));
  return {
    domain: MANDATE_EIP712_DOMAIN,
    types: MANDATE_EIP712_TYPES,
    primaryType: 'Mandate' as const,
    message: { instance: String(m['instance']), principal: lower('principal'), operator: lower('operator'), executor: lower('executor'), spec: mandateSignedText(spec) },
  };
}

/** The 32-byte digest the principal's key signs under `scheme`. Throws `TypeError` on a spec without a mandate. */
export function mandateDigest(spec: Readonly<Record<string, unknown>>, scheme: MandateSignatureScheme): Uint8Array {
  if (scheme === 'eip191') return eip191Digest(MANDATE_EIP191_PREFIX + mandateSignedText(spec));
  const hex = hashTypedData(mandateTypedData(spec));
  return fromHex(hex.slice(2));
}

/** Result of {@link checkMandateSignature}. */
export type MandateSignatureCheck =
  | { readonly ok: true; readonly scheme: MandateSignatureScheme; readonly signer: string }
  | { readonly ok: false; readonly code: 'mandate_unsigned' | 'mandate_bad_signature'; readonly problem: string };

/**
 * Checks `spec.mandate.signature` against `spec.mandate.principal` (lowercase
 * compare). Never throws.
 *
 * @example
 * checkMandateSignature(spec); // { ok: true, scheme: 'eip712', signer: '0x90f79bf6…' }
 */
export function checkMandateSignature(spec: Readonly<Record<string, unknown>>): MandateSignatureCheck {
  const m = spec['mandate'];
  const sig = isObject(m) ? m['signature'] : undefined;
  if (sig === undefined) return { ok: false, code: 'mandate_unsigned', problem: 'mandate_unsigned: spec.mandate.signature is required: a version-2 mandate exists only signed by its principal' };
  const bad = (problem: string): MandateSignatureCheck => ({ ok: false, code: 'mandate_bad_signature', problem: `mandate_bad_signature: ${problem}` });
  if (!isObject(sig) || Object.keys(sig).length !== 2 || !(MANDATE_SIGNATURE_SCHEMES as readonly unknown[]).includes(sig['scheme']) || typeof sig['value'] !== 'string') {
    return bad('spec.mandate.signature must be exactly { scheme: "eip712" | "eip191", value: "0x" + 130 hex }');
  }
  const scheme = sig['scheme'] as MandateSignatureScheme;
  let digest: Uint8Array;
  try {
    digest = mandateDigest(spec, scheme);
  } catch {
    return bad('the spec cannot be encoded for signing');
  }
  const signer = recoverDigest(digest, sig['value']);
  if (signer === null) return bad('spec.mandate.signature.value is not a canonical signature (65 bytes, low s, v 27 or 28) that recovers a key');
  const principal = String((m as Record<string, unknown>)['principal']).toLowerCase();
  if (signer !== principal) return bad(`the ${scheme} signature recovers to ${signer}, not to the principal ${principal}`);
  return { ok: true, scheme, signer };
}

/**
 * Signs `spec`'s mandate as its principal and returns the spec with
 * `mandate.signature` set (any earlier signature is replaced). The key must
 * be the principal's, or the result will not verify.
 *
 * @example
 * const signed = await signMandate(spec, principalKey);            // EIP-712
 * const plain = await signMandate(spec, principalKey, 'eip191');   // personal_sign
 */
export async function signMandate<S extends Readonly<Record<string, unknown>>>(spec: S, key: RefereeSigner, scheme: MandateSignatureScheme = 'eip712'): Promise<S> {
  const account = accountOf(key);
  const m = spec['mandate'];
  if (!isObject(m)) throw new TypeError('spec.mandate must be an object');
  const value =
    scheme === 'eip191'
      ? await account.signMessage({ message: MANDATE_EIP191_PREFIX + mandateSignedText(spec) })
      : await (account.signTypedData as (t: ReturnType<typeof mandateTypedData>) => Promise<`0x${string}`>)(mandateTypedData(spec));
  return { ...spec, mandate: { ...m, signature: { scheme, value: value.toLowerCase() } } } as unknown as S;
}

/**
 * {@link signMandate} for a raw private key, synchronously (RFC 6979 over the
 * same digest, low s, `v ∈ {27, 28}`): byte for byte what viem's
 * `signTypedData` / `signMessage` give. For callers that build specs
 * synchronously (the demo); a wallet uses {@link mandateTypedData}.
 *
 * @example
 * const spec = signMandateWithKey({ name: 'desk', agents, mandate }, '0x7c85…');
 */
export function signMandateWithKey<S extends Readonly<Record<string, unknown>>>(spec: S, privateKey: `0x${string}`, scheme: MandateSignatureScheme = 'eip712'): S {
  const m = spec['mandate'];
  if (!isObject(m)) throw new TypeError('spec.mandate must be an object');
  const sig = secp256k1.sign(mandateDigest(spec, scheme), privateKey.slice(2), { lowS: true });
  const value = `0x${sig.r.toString(16).padStart(64, '0')}${sig.s.toString(16).padStart(64, '0')}${(27 + sig.recovery).toString(16)}`;
  return { ...spec, mandate: { ...m, signature: { scheme, value } } } as unknown as S;
}

/** The EIP-712 type of a principal's (or any party's) act on a version-2 mandate: the transition text itself. */
export const ACT_EIP712_TYPES = Object.freeze({ Act: [{ name: 'act', type: 'string' }] } as const);

/**
 * The EIP-712 typed data of a transition (terminate, release, redeem) signed
 * "the same way" as the mandate: domain {@link MANDATE_EIP712_DOMAIN}, primary
 * type `Act(string act)`, `act` = the transition's EIP-191 text (`transitionMessage`).
 */
export function actTypedData(text: string) {
  return { domain: MANDATE_EIP712_DOMAIN, types: ACT_EIP712_TYPES, primaryType: 'Act' as const, message: { act: text } };
}

/** The digest of {@link actTypedData}. */
export function actDigest(text: string): Uint8Array {
  return fromHex(hashTypedData(actTypedData(text)).slice(2));
}
