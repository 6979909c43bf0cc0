/**
 * Key names (C2SP signed-note): non-empty, no Unicode white space, no `+`.
 * `\p{White_Space}` is exactly the set Go's `unicode.IsSpace` accepts
 * (U+0009–U+000D, U+0020, U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028,
 * U+2029, U+202F, U+205F, U+3000).
 */
import { hasLoneSurrogate as hasLoneSurrogateProtocol } from '../../protocol/index.js';

const BAD_NAME_CHAR = /[\p{White_Space}+]/u;

/**
 * True when `name` may name a note key: non-empty, well-formed Unicode, no
 * white space and no `+`.
 *
 * @example
 * isValidKeyName('tally.example/acme')  // true
 * isValidKeyName('a+b')                 // false
 */
export function isValidKeyName(name: string): boolean {
  return typeof name === 'string' && name.length > 0 && !BAD_NAME_CHAR.test(name) && !hasLoneSurrogateProtocol(name);
}

/** True when `s` contains an unpaired UTF-16 surrogate (it has no UTF-8 encoding). */
export function hasLoneSurrogate(s: string): boolean {
  return hasLoneSurrogateProtocol(s);
}
