/** Address spelling rules: compared case-insensitively, reported EIP-55 checksummed. */
import { keccak_256 } from '@noble/hashes/sha3.js';

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
  // EIP-55 here rather than viem's getAddress: importing 'viem' loads its whole index (hundreds of
  // modules, megabytes of heap every process that verifies an intent keeps for good).
  if (!ADDRESS_RE.test(lowercase)) throw new TypeError(`not a 20-byte 0x hex address: ${lowercase}`);
  const hex = lowercase.slice(2).toLowerCase();
  const hash = keccak_256(new TextEncoder().encode(hex));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const c = hex.charAt(i);
    const nibble = ((hash[i >> 1] ?? 0) >> (i % 2 === 0 ? 4 : 0)) & 0x0f;
    out += nibble >= 8 ? c.toUpperCase() : c;
  }
  return out;
}
