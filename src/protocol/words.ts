/**
 * Comparing 64 ASCII codes at a time (a digest's hex as a bundle line writes
 * it) as 16 little-endian 32-bit words read through a DataView over the
 * line's bytes, instead of byte by byte: the verifier's fast path over a
 * chunk (`ChainVerifier.acceptAt`) compares a line's session, and a turn's
 * frame root, with codes it already holds. Pure.
 */

/** True when `line[at, at + codes.length)` is `codes`. */
export function codesEqualAt(line: Uint8Array, at: number, codes: Uint8Array): boolean {
  for (let i = 0; i < codes.length; i++) if (line[at + i] !== codes[i]) return false;
  return true;
}

/** Writes the 64 codes `codes[at, at + 64)` into `out` as 16 words (as {@link wordsEqualAt} reads them). */
export function wordsOfCodes(codes: Uint8Array, at: number, out: Uint32Array): void {
  for (let i = 0; i < 16; i++) {
    const o = at + 4 * i;
    out[i] = (codes[o]! | (codes[o + 1]! << 8) | (codes[o + 2]! << 16) | (codes[o + 3]! << 24)) >>> 0;
  }
}

/** True when the 64 bytes at `at` of `view` are the codes `words` holds (the caller knows `at + 64` is within the view). */
export function wordsEqualAt(view: DataView, at: number, words: Uint32Array): boolean {
  for (let i = 0; i < 16; i++) if (view.getUint32(at + 4 * i, true) !== words[i]) return false;
  return true;
}

/** Reads the 64 bytes at `at` of `view` into `out` as 16 words. */
export function wordsAt(view: DataView, at: number, out: Uint32Array): void {
  for (let i = 0; i < 16; i++) out[i] = view.getUint32(at + 4 * i, true);
}
