const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const LOOKUP = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) LOOKUP[ALPHABET.charCodeAt(i)] = i;

/** Standard padded base64 (RFC 4648 §4) of `bytes`. */
export function toBase64(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + '==';
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + '=';
  }
  return out;
}

/**
 * Strict decoding of standard padded base64: the only accepted spelling of a
 * byte string is the one {@link toBase64} produces (padding required, unused
 * bits zero), so every byte string has exactly one encoding. Returns
 * `undefined` for anything else.
 */
export function fromBase64(s: string): Uint8Array | undefined {
  const n = s.length;
  if (n % 4 !== 0) return undefined;
  const pad = n > 0 && s.charCodeAt(n - 1) === 61 ? (s.charCodeAt(n - 2) === 61 ? 2 : 1) : 0;
  const out = new Uint8Array((n / 4) * 3 - pad);
  const full = n - (pad > 0 ? 4 : 0);
  let o = 0;
  for (let i = 0; i < full; i += 4) {
    const a = dec(s.charCodeAt(i));
    const b = dec(s.charCodeAt(i + 1));
    const c = dec(s.charCodeAt(i + 2));
    const d = dec(s.charCodeAt(i + 3));
    if ((a | b | c | d) < 0) return undefined;
    out[o++] = (a << 2) | (b >> 4);
    out[o++] = ((b & 15) << 4) | (c >> 2);
    out[o++] = ((c & 3) << 6) | d;
  }
  if (pad > 0) {
    const a = dec(s.charCodeAt(full));
    const b = dec(s.charCodeAt(full + 1));
    if ((a | b) < 0) return undefined;
    out[o++] = (a << 2) | (b >> 4);
    if (pad === 2) {
      // Unused bits must be zero: one spelling per byte string.
      if ((b & 15) !== 0) return undefined;
    } else {
      const c = dec(s.charCodeAt(full + 2));
      if (c < 0 || (c & 3) !== 0) return undefined;
      out[o++] = ((b & 15) << 4) | (c >> 2);
    }
  }
  return out;
}

function dec(c: number): number {
  return c < 128 ? LOOKUP[c]! : -1;
}
