/**
 * The page's SHA-256 (@noble/hashes): the protocol's synchronous `Digest`,
 * and the browser binding of `src/codec/sha256.ts` (node:crypto) for the
 * engine code the page reuses to replay a day (bindings.json; applied by
 * scripts/build-web.mjs and followed by tests/web/browser-safe.test.ts).
 */
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';

/** SHA-256 of `data`. */
export const sha256: (data: Uint8Array) => Uint8Array = (data) => nobleSha256(data);

/** SHA-256 of `data` written into `out[0, 32)` (the twin of the codec's `sha256Into`; `out` may be the array `data` views). */
export const sha256Into: (data: Uint8Array, out: Uint8Array) => void = (data, out) => out.set(nobleSha256(data));
