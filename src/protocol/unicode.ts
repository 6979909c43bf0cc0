/**
 * The one lone-surrogate rule: a string holding an unpaired UTF-16 surrogate
 * has no UTF-8 encoding, and Tally refuses it (`lone-surrogate`) wherever a
 * string becomes bytes — canonical JSON, the wire's text bodies, note and
 * checkpoint text — instead of letting an encoder write U+FFFD.
 */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// ES2024 `String.prototype.isWellFormed` (Node >= 20, current browsers) answers the
// same question natively, several times faster than the regular expression; the
// expression is kept for a runtime without it (the compiler's lib is ES2022).
const isWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;

/**
 * True when `s` holds an unpaired UTF-16 surrogate: a string with no UTF-8
 * encoding, which Tally refuses (`lone-surrogate`) wherever a string from
 * outside becomes bytes, instead of letting an encoder write U+FFFD.
 *
 * @example
 * hasLoneSurrogate('a\ud800') // true
 * hasLoneSurrogate('a\ufffd') // false
 */
export function hasLoneSurrogate(s: string): boolean {
  return isWellFormed === undefined ? LONE_SURROGATE.test(s) : !isWellFormed.call(s);
}
