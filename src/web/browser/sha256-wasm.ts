/**
 * The page's WebAssembly SHA-256 (hash-wasm), loaded once: 2–2.5× @noble/hashes
 * per call on entry-sized inputs (measured in Node: 1.0 µs against 2.0 µs for
 * a 65-byte tree node, 2.4 µs against 5.8 µs for a 444-byte turn). The module
 * compiles asynchronously; until it is ready — or where it cannot load, as
 * under a policy without 'wasm-unsafe-eval' — ./sha256.ts hashes with
 * @noble/hashes. Both are SHA-256, so which one hashed never changes a digest
 * or a verdict. The worker awaits {@link sha256Ready} before it verifies.
 */
import { createSHA256, type IHasher } from 'hash-wasm';

let wasm: IHasher | undefined;

/** The compiled hasher, once ready. */
export function wasmSha256(): IHasher | undefined {
  return wasm;
}

/** Which implementation answers now ('wasm' once compiled, else 'noble'). */
export function sha256Backend(): 'wasm' | 'noble' {
  return wasm === undefined ? 'noble' : 'wasm';
}

/** Settles once the WebAssembly SHA-256 is ready, or has failed to load (then noble stays). Never rejects. */
export const sha256Ready: Promise<void> =
  (globalThis as { WebAssembly?: unknown }).WebAssembly === undefined
    ? Promise.resolve()
    : createSHA256().then(
        (h) => {
          wasm = h;
        },
        () => undefined,
      );
