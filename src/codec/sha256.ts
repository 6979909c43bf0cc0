import { createHash } from 'node:crypto';

/**
 * SHA-256 of `data` via node:crypto (OpenSSL): the digest the engine plugs
 * into the pure protocol layer.
 *
 * @example
 * toHex(sha256(new Uint8Array())) // 'e3b0c442…b855'
 */
export function sha256(data: Uint8Array): Uint8Array {
  return createHash('sha256').update(data).digest();
}
