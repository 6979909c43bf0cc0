/** Address spelling rules: compared case-insensitively, reported EIP-55 checksummed. */
import { getAddress } from 'viem';

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

/**
 * Lowercase form of a 20-byte `0x` hex address, or null when `value` is not
 * one. The EIP-55 checksum is NOT enforced (comparison is checksum-insensitive).
 *
 * @example
 * lowerAddress('0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266'); // '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'
 * lowerAddress('0x123'); // null
 */
export function lowerAddress(value: unknown): string | null {
  return typeof value === 'string' && ADDRESS_RE.test(value) ? value.toLowerCase() : null;
}

/**
 * EIP-55 checksummed spelling of a valid address.
 *
 * @example
 * checksumAddress('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'); // '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'
 */
export function checksumAddress(lowercase: string): string {
  return getAddress(lowercase);
}
