/**
 * EIP-3009's signed bytes: EIP-712 typed data `TransferWithAuthorization(address from,address to,
 * uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)` under the token's domain
 * `EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)`, with the
 * name and version the offer's `extra` names. The digest is `keccak256(0x19 0x01 ‖ domainSeparator
 * ‖ hashStruct(message))` (viem's `hashTypedData`; tests/payments/eip712.test.ts recomputes it from
 * EIP-712 itself), and the signature is recovered with the one strict rule of referee/eip191.ts
 * (65 bytes r ‖ s ‖ v, low s, v ∈ {27, 28}).
 */
import { hashTypedData, type Hex } from 'viem';
import { fromHex } from '../protocol/index.js';
import { recoverDigest } from '../referee/eip191.js';
import type { Authorization } from './payload.js';

/** The EIP-712 types of an EIP-3009 transfer (as @x402/evm's `authorizationTypes`). */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = Object.freeze({
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const);

/** The token's EIP-712 domain. */
export interface TokenDomain {
  readonly name: string;
  readonly version: string;
  readonly chainId: number;
  readonly verifyingContract: string;
}

/** The 32-byte EIP-712 digest the payer signs, as 0x-hex. */
export function authorizationDigest(domain: TokenDomain, a: Authorization): Hex {
  return hashTypedData({
    domain: { name: domain.name, version: domain.version, chainId: domain.chainId, verifyingContract: domain.verifyingContract as Hex },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: { from: a.from as Hex, to: a.to as Hex, value: a.value, validAfter: a.validAfter, validBefore: a.validBefore, nonce: a.nonce as Hex },
  });
}

/** The lowercase address the signature over `digest` recovers to, or null (never throws). */
export function recoverAuthorizer(digest: Hex, signature: string): string | null {
  return recoverDigest(fromHex(digest.slice(2))!, signature);
}
