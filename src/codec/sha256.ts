import * as nodeCrypto from 'node:crypto';

// `crypto.hash` (Node >= 20.12) is a one-shot digest without a Hash object:
// ~40% faster than createHash for entry-sized inputs. Fall back where absent.
const oneShot = (nodeCrypto as { hash?: (alg: string, data: Uint8Array, enc: 'buffer') => Uint8Array }).hash;

/**
 * SHA-256 of `data` via node:crypto (OpenSSL): the digest the engine plugs
 * into the pure protocol layer.
 *
 * @example
 * toHex(sha256(new Uint8Array())) // 'e3b0c442…b855'
 */
export const sha256: (data: Uint8Array) => Uint8Array = oneShot
  ? (data) => oneShot('sha256', data, 'buffer')
  : (data) => nodeCrypto.createHash('sha256').update(data).digest();
