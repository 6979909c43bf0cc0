/** Shared fixtures for the Merkle tests (not a test file). */
import { sha256Hasher } from '../../src/merkle/index.js';
import type { MerkleHasher } from '../../src/protocol/merkle/index.js';

/** `n` distinct leaf hashes: leaf i hashes the 8 bytes (salt, i). */
export function makeLeaves(n: number, salt: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    const data = new Uint8Array(8);
    const view = new DataView(data.buffer);
    view.setUint32(0, salt >>> 0);
    view.setUint32(4, i);
    out.push(sha256Hasher.hashLeaf(data));
  }
  return out;
}

/** A hasher that counts calls, wrapping the real SHA-256 one. */
export function countingHasher(): { hasher: MerkleHasher; count: () => number; reset: () => void } {
  let calls = 0;
  const hasher: MerkleHasher = {
    emptyRoot: () => sha256Hasher.emptyRoot(),
    hashLeaf: (d) => {
      calls++;
      return sha256Hasher.hashLeaf(d);
    },
    hashChildren: (l, r) => {
      calls++;
      return sha256Hasher.hashChildren(l, r);
    },
  };
  return { hasher, count: () => calls, reset: () => (calls = 0) };
}

/** Copy of `bytes` with bit `bit` (0..255) flipped. */
export function flipBit(bytes: Uint8Array, bit: number): Uint8Array {
  const out = bytes.slice();
  out[(bit >> 3) % out.length] = (out[(bit >> 3) % out.length] as number) ^ (1 << (bit & 7));
  return out;
}
