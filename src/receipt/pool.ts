/**
 * Receipt-sized byte arrays carved out of shared blocks. A `Uint8Array` of
 * more than 64 bytes gets its own off-heap backing store in V8, which is
 * slow to allocate and to collect (docs/PERFORMANCE.md, "Single-turn receipt
 * verification", has the measured parts) — and a cold receipt verification needs three of them
 * (the entry bytes, the signature line, the signed message). Views into one
 * 16 KiB block cost a few nanoseconds each. A block is never written again
 * once a view of it is handed out (the next view starts after it; a full
 * block is replaced, not reused), so each view is as private as a fresh
 * array; its `buffer` is the shared block (as with Node's pooled `Buffer`s),
 * so callers must honour `byteOffset`/`byteLength`.
 */

const BLOCK_BYTES = 16 * 1024;
/** Arrays up to this size live in V8's heap already (cheap); above `MAX_POOLED` a block would be wasted. */
const MIN_POOLED = 65;
const MAX_POOLED = 2048;

let block = new ArrayBuffer(BLOCK_BYTES);
let used = 0;

/**
 * `length` zeroed bytes that nobody else writes to: a view into a shared block
 * for 65–2048 bytes, else a fresh array.
 *
 * @example
 * const out = pooledBytes(675); // out.byteOffset may be > 0
 */
export function pooledBytes(length: number): Uint8Array {
  if (length < MIN_POOLED || length > MAX_POOLED) return new Uint8Array(length);
  if (used + length > BLOCK_BYTES) {
    block = new ArrayBuffer(BLOCK_BYTES);
    used = 0;
  }
  // The constructor over a buffer is cheaper than `subarray` (no species look-up).
  const out = new Uint8Array(block, used, length);
  used += (length + 7) & ~7;
  return out;
}
