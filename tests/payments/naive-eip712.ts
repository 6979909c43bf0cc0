/**
 * EIP-712 written from the EIP's text, for a second computation of the digest an EIP-3009
 * authorization signs (cross-checked against viem's `hashTypedData` and the referee's
 * `authorizationDigest`). Only what these structs use: `string`, `address`, `uint256`, `bytes32`.
 * Keccak-256 from @noble/hashes, not viem.
 *
 *   hashStruct(s) = keccak256(typeHash ‖ encodeData(s)),  typeHash = keccak256(encodeType)
 *   encodeType    = Name(type1 name1,type2 name2,…)
 *   string        → keccak256(UTF-8 bytes);  address → left-padded to 32 bytes;
 *   uint256       → 32-byte big-endian;       bytes32 → as is
 *   digest        = keccak256(0x19 ‖ 0x01 ‖ hashStruct(EIP712Domain) ‖ hashStruct(message))
 */
import { keccak_256 } from '@noble/hashes/sha3.js';

type Field = { readonly name: string; readonly type: 'string' | 'address' | 'uint256' | 'bytes32' };

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const hexBytes = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h.replace(/^0x/, ''), 'hex'));

function word(n: bigint): Uint8Array {
  if (n < 0n || n >= 1n << 256n) throw new RangeError('uint256 out of range');
  return hexBytes(n.toString(16).padStart(64, '0'));
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) out.set(p, (o += p.length) - p.length);
  return out;
}

function encodeValue(f: Field, v: unknown): Uint8Array {
  switch (f.type) {
    case 'string':
      return keccak_256(utf8(String(v)));
    case 'address': {
      const b = hexBytes(String(v));
      if (b.length !== 20) throw new RangeError(`${f.name}: not an address`);
      return concat(new Uint8Array(12), b);
    }
    case 'uint256':
      return word(BigInt(v as string | bigint | number));
    case 'bytes32': {
      const b = hexBytes(String(v));
      if (b.length !== 32) throw new RangeError(`${f.name}: not 32 bytes`);
      return b;
    }
  }
}

export function hashStruct(name: string, fields: readonly Field[], value: Record<string, unknown>): Uint8Array {
  const type = `${name}(${fields.map((f) => `${f.type} ${f.name}`).join(',')})`;
  return keccak_256(concat(keccak_256(utf8(type)), ...fields.map((f) => encodeValue(f, value[f.name]))));
}

const DOMAIN: readonly Field[] = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
];
const TRANSFER: readonly Field[] = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
];

/** The EIP-3009 TransferWithAuthorization digest, 0x + 64 lowercase hex. */
export function naiveAuthorizationDigest(domain: Record<string, unknown>, message: Record<string, unknown>): string {
  const d = concat(Uint8Array.of(0x19, 0x01), hashStruct('EIP712Domain', DOMAIN, domain), hashStruct('TransferWithAuthorization', TRANSFER, message));
  return `0x${Buffer.from(keccak_256(d)).toString('hex')}`;
}
