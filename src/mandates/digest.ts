/**
 * The byte seam of the mandates layer: SHA-256 is the project's one
 * (src/codec/sha256.ts, node:crypto in Node, bound to the page's twin in the
 * browser bundle by src/web/browser/bindings.json), and text and base64url
 * are converted here without Node's `Buffer`, so `createAp2Ruler` and every
 * check it runs load in the grader's page. Each function reproduces exactly
 * the Node conversion it replaced (noted on it), so no verdict changes.
 */
import { sha256 } from '../codec/sha256.js';
import { fromBase64, toBase64, toHex } from '../protocol/index.js';

const B64URL = /^[A-Za-z0-9_-]+$/;
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * Whether `text` is in the alphabet of a compact JWS / SD-JWT (base64url,
 * `.` and `~`): what a turn member hashed by {@link b64sha256} must be, since
 * `asciiBytes` would map two non-ASCII texts that differ to the same bytes.
 */
export function isCompactText(text: string): boolean {
  return /^[A-Za-z0-9_.~-]+$/.test(text);
}

/**
 * The bytes of `text` as Node's `Buffer.from(text, 'ascii')` writes them: the
 * low byte of each UTF-16 code unit (ASCII text is its own bytes).
 */
export function asciiBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0xff;
  return out;
}

/** UTF-8 text of `bytes` as `Buffer.prototype.toString('utf8')` reads it: a BOM kept, ill-formed sequences replaced by U+FFFD. */
export function utf8Text(bytes: Uint8Array): string {
  return UTF8.decode(bytes);
}

/** Unpadded base64url (RFC 4648 §5) of `bytes`, as `Buffer#toString('base64url')`. */
export function toBase64url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
}

/**
 * base64url text in its one canonical form (unpadded, zero trailing bits),
 * decoded; undefined otherwise (empty text included). The same rule as
 * decoding with `Buffer` and requiring the re-encoding to equal the text.
 */
export function canonicalB64url(s: string): Uint8Array | undefined {
  if (!B64URL.test(s) || s.length % 4 === 1) return undefined;
  const padded = s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4);
  return fromBase64(padded);
}

/** base64url SHA-256 of the ASCII bytes of `text` (AP2's checkout_hash, RFC 9901's disclosure digest, Tally's mandate id). */
export function b64sha256(text: string): string {
  return toBase64url(sha256(asciiBytes(text)));
}

/** Lowercase hex SHA-256 of `bytes`. */
export function hexSha256(bytes: Uint8Array): string {
  return toHex(sha256(bytes));
}

/** The hasher @sd-jwt/core takes: SHA-256 of a string's ASCII bytes or of a buffer's bytes. */
export function sdJwtHasher(data: string | ArrayBuffer): Uint8Array {
  return sha256(typeof data === 'string' ? asciiBytes(data) : new Uint8Array(data));
}
