/**
 * The page's SHA-256: the protocol's synchronous `Digest`, and the browser
 * binding of `src/codec/sha256.ts` (node:crypto) for the engine code the page
 * reuses to replay a day (bindings.json; applied by scripts/build-web.mjs and
 * followed by tests/web/browser-safe.test.ts). WebAssembly once compiled,
 * @noble/hashes before (./sha256-wasm.ts).
 */
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { wasmSha256 } from './sha256-wasm.js';

/** SHA-256 of `data` (a fresh array). */
export const sha256: (data: Uint8Array) => Uint8Array = (data) => {
  const h = wasmSha256();
  if (h === undefined) return nobleSha256(data);
  h.init();
  h.update(data);
  return h.digest('binary');
};

/** SHA-256 of `data` written into `out[0, 32)` (the twin of the codec's `sha256Into`; `out` may be the array `data` views). */
export const sha256Into: (data: Uint8Array, out: Uint8Array) => void = (data, out) => out.set(sha256(data));

/** SHA-256 of `data` written into `out[at, at + 32)` (the twin of the codec's `sha256At`). */
export const sha256At: (data: Uint8Array, out: Uint8Array, at: number) => void = (data, out, at) => out.set(sha256(data), at);
