import * as nodeCrypto from 'node:crypto';

// `crypto.hash` (Node >= 20.12) is a one-shot digest without a Hash object:
// ~40% faster than createHash for entry-sized inputs. Fall back where absent.
const oneShot = (nodeCrypto as { hash?: (alg: string, data: Uint8Array, enc: 'binary') => string }).hash;

/**
 * The 32 digest bytes of a one-shot `binary` (latin1) digest: node hands a short string
 * back far cheaper than a fresh Buffer (whose backing store is allocated in
 * C++ per call), so copying the 32 code units into a new array halves the cost
 * of hashing a Merkle node (65 bytes) and still returns a fresh array.
 */
function latin1Into(s: string, out: Uint8Array): Uint8Array {
  for (let i = 0; i < 32; i++) out[i] = s.charCodeAt(i);
  return out;
}

/**
 * SHA-256 of `data` via node:crypto (OpenSSL): the digest the engine plugs
 * into the pure protocol layer. Returns a fresh 32-byte array.
 *
 * @example
 * toHex(sha256(new Uint8Array())) // 'e3b0c442…b855'
 */
export const sha256: (data: Uint8Array) => Uint8Array = oneShot
  ? (data) => latin1Into(oneShot('sha256', data, 'binary'), new Uint8Array(32))
  : (data) => nodeCrypto.createHash('sha256').update(data).digest();

/**
 * SHA-256 of `data` written into `out[0, 32)` instead of a fresh array (for a
 * fold that keeps its running hash in one place: no array per step). `out`
 * may be the array `data` views; it is written after `data` is read.
 *
 * @example
 * sha256Into(preimage, acc);
 */
export const sha256Into: (data: Uint8Array, out: Uint8Array) => void = oneShot
  ? (data, out) => void latin1Into(oneShot('sha256', data, 'binary'), out)
  : (data, out) => out.set(nodeCrypto.createHash('sha256').update(data).digest());

/**
 * SHA-256 of `data` written into `out[at, at + 32)` (a record or a level of
 * nodes inside a larger array: no view per hash). Read before written, as
 * {@link sha256Into}.
 *
 * @example
 * sha256At(line, records, 24);
 */
export const sha256At: (data: Uint8Array, out: Uint8Array, at: number) => void = oneShot
  ? (data, out, at) => {
      const s = oneShot('sha256', data, 'binary');
      for (let i = 0; i < 32; i++) out[at + i] = s.charCodeAt(i);
    }
  : (data, out, at) => out.set(nodeCrypto.createHash('sha256').update(data).digest(), at);
