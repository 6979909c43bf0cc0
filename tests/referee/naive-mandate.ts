/**
 * The principal's mandate signature computed a second time, from the texts
 * alone (EIP-712 §"Specification": encodeType / encodeData / hashStruct /
 * domainSeparator, and PROTOCOL.md §10): keccak from @noble/hashes, sorted-key
 * JSON written here, nothing from src/.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';

const te = new TextEncoder();
const k = (s: string | Uint8Array) => keccak_256(typeof s === 'string' ? te.encode(s) : s);
const cat = (...xs: Uint8Array[]) => {
  const out = new Uint8Array(xs.reduce((n, x) => n + x.length, 0));
  let o = 0;
  for (const x of xs) (out.set(x, o), (o += x.length));
  return out;
};
/** An address as an EIP-712 `address` word: 12 zero bytes, then its 20 bytes. */
const word = (addr: string) => cat(new Uint8Array(12), Uint8Array.from(Buffer.from(addr.slice(2), 'hex')));
const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;

/** Sorted-key JSON without whitespace: RFC 8785 for what specs hold (strings, safe integers, booleans, objects, arrays). */
export function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    return `{${Object.keys(v)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${sortedJson((v as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The signed text: the spec without `mandate.signature`, as sorted-key JSON. */
export function naiveSignedText(spec: Record<string, unknown>): string {
  const { signature: _s, ...rest } = spec['mandate'] as Record<string, unknown>;
  return sortedJson({ ...spec, mandate: rest });
}

/** The EIP-712 digest of a mandate signature (0x + 64 hex). */
export function naiveEip712Digest(spec: Record<string, unknown>): string {
  const m = spec['mandate'] as Record<string, unknown>;
  const domain = k(cat(k('EIP712Domain(string name,string version)'), k('Tally mandate'), k('2')));
  const typeHash = k('Mandate(string instance,address principal,address operator,address executor,string spec)');
  const struct = k(cat(typeHash, k(String(m['instance'])), word(String(m['principal'])), word(String(m['operator'])), word(String(m['executor'])), k(naiveSignedText(spec))));
  return hex(k(cat(Uint8Array.of(0x19, 0x01), domain, struct)));
}

/** The EIP-191 digest of a mandate signature: personal_sign of "tally/referee/v2|mandate|" ‖ the signed text. */
export function naiveEip191Digest(spec: Record<string, unknown>): string {
  const msg = te.encode(`tally/referee/v2|mandate|${naiveSignedText(spec)}`);
  return hex(k(cat(te.encode(`\x19Ethereum Signed Message:\n${msg.length}`), msg)));
}
