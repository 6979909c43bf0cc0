import { TallyError } from './errors.js';
import { JSON_MAX_DEPTH } from './strict-json.js';
import { hasLoneSurrogate } from './unicode.js';

/**
 * A value Tally can hash: strings, safe integers, booleans, arrays and plain
 * objects of these. Decimals travel as canonical decimal strings; there is no
 * `null` (absent fields are omitted) and no non-integer number.
 */
export type CanonicalValue = string | number | boolean | readonly CanonicalValue[] | CanonicalObject;
/** A plain object of canonical values; `undefined` members are omitted on encoding. */
export interface CanonicalObject {
  readonly [key: string]: CanonicalValue | undefined;
}

/**
 * Deepest nesting accepted (the one limit, {@link JSON_MAX_DEPTH}); deeper input is
 * rejected before it can exhaust the stack. The outermost container is level 1.
 */
export const CANONICAL_MAX_DEPTH = JSON_MAX_DEPTH;

const encoder = new TextEncoder();

/** Why a value cannot be canonicalized; `path` is a JSON-pointer-like location. */
export interface CanonicalProblem {
  readonly code:
    | 'non-integer-number'
    | 'unsafe-integer'
    | 'non-finite-number'
    | 'null'
    | 'lone-surrogate'
    | 'unsupported-type'
    | 'too-deep';
  readonly path: string;
}

class Problem {
  constructor(readonly problem: CanonicalProblem) {}
}

// Characters JSON.stringify escapes (", \\, U+0000–U+001F) and every surrogate
// code unit: a string without any of them encodes as itself between quotes.
const NEEDS_CARE = /[\u0000-\u001f"\\\ud800-\udfff]/;

/**
 * The location being encoded, as a stack of member names and array indexes.
 * It is turned into a JSON-pointer-like path only when a problem is thrown,
 * so the common (valid) case builds no path strings.
 */
type Segments = Array<string | number>;

function pathOf(segs: Segments): string {
  let p = '';
  for (const s of segs) p += `/${s}`;
  return p;
}

function encodeString(s: string, segs: Segments): string {
  if (!NEEDS_CARE.test(s)) return `"${s}"`;
  if (hasLoneSurrogate(s)) throw new Problem({ code: 'lone-surrogate', path: pathOf(segs) });
  // JSON.stringify escapes exactly what RFC 8785 §3.2.2.2 requires: `"`, `\`,
  // and U+0000–U+001F (as \b \t \n \f \r or \u00xx lowercase); all else literal.
  return JSON.stringify(s);
}

function encode(v: unknown, segs: Segments, depth: number): string {
  switch (typeof v) {
    case 'string':
      return encodeString(v, segs);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(v)) throw new Problem({ code: 'non-finite-number', path: pathOf(segs) });
      if (!Number.isInteger(v)) throw new Problem({ code: 'non-integer-number', path: pathOf(segs) });
      if (!Number.isSafeInteger(v)) throw new Problem({ code: 'unsafe-integer', path: pathOf(segs) });
      return v === 0 ? '0' : String(v); // -0 encodes as 0, as in RFC 8785
    case 'object': {
      if (v === null) throw new Problem({ code: 'null', path: pathOf(segs) });
      if (depth >= CANONICAL_MAX_DEPTH) throw new Problem({ code: 'too-deep', path: pathOf(segs) });
      if (Array.isArray(v)) {
        let out = '[';
        for (let i = 0; i < v.length; i++) {
          if (i > 0) out += ',';
          const item: unknown = v[i];
          segs.push(i);
          if (item === undefined) throw new Problem({ code: 'unsupported-type', path: pathOf(segs) });
          out += encode(item, segs, depth + 1);
          segs.pop();
        }
        return out + ']';
      }
      const proto: unknown = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw new Problem({ code: 'unsupported-type', path: pathOf(segs) });
      const obj = v as Record<string, unknown>;
      // Default sort compares UTF-16 code units: the order RFC 8785 §3.2.3 requires.
      const keys = Object.keys(obj).sort();
      let out = '{';
      let first = true;
      for (const k of keys) {
        const item = obj[k];
        if (item === undefined) continue;
        segs.push(k);
        if (!first) out += ',';
        first = false;
        out += encodeString(k, segs) + ':' + encode(item, segs, depth + 1);
        segs.pop();
      }
      return out + '}';
    }
    default:
      throw new Problem({ code: 'unsupported-type', path: pathOf(segs) });
  }
}

/** Options of {@link tryCanonicalJson}. */
export interface CanonicalOptions {
  /**
   * The level `value` itself sits at in the document it will be written into
   * (default 1: it is the document). A member of an entry — frame `data`,
   * `spec`, `ruling`, `artifacts` — is at level 2, so it may nest one level
   * less than {@link CANONICAL_MAX_DEPTH}: the limit is on the whole entry.
   */
  readonly level?: number;
}

/**
 * Canonical JSON text of `value` (Tally's one byte rule for structured data):
 * object keys sorted by UTF-16 code units at every depth, no whitespace,
 * `undefined` members omitted, only safe integers as numbers. For every value
 * it accepts the output equals RFC 8785 (JCS).
 *
 * @returns `{ ok: true, text }` or `{ ok: false, problem }`; never throws on data.
 * @example
 * tryCanonicalJson({ b: 1, a: ['x'] }) // { ok: true, text: '{"a":["x"],"b":1}' }
 */
export function tryCanonicalJson(value: unknown, options: CanonicalOptions = {}): { ok: true; text: string } | { ok: false; problem: CanonicalProblem } {
  try {
    return { ok: true, text: encode(value, [], (options.level ?? 1) - 1) };
  } catch (e) {
    if (e instanceof Problem) return { ok: false, problem: e.problem };
    throw e;
  }
}

// True when `v` is inside the canonical domain AND `JSON.stringify` writes it
// exactly as canonically: plain objects whose keys already ascend by UTF-16
// code units, safe integers other than -0, strings, booleans, arrays (a lone
// surrogate is caught by the caller's `\u` test). `false` means "not proven".
function plainCanonical(v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isSafeInteger(v) && !Object.is(v, -0);
    case 'object': {
      if (v === null || depth >= CANONICAL_MAX_DEPTH) return false;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (!plainCanonical(v[i], depth + 1)) return false;
        return true;
      }
      if (Object.getPrototypeOf(v) !== Object.prototype) return false;
      const obj = v as Record<string, unknown>;
      let prev: string | undefined;
      for (const k of Object.keys(obj)) {
        if (prev !== undefined && !(prev < k)) return false;
        prev = k;
        if (!plainCanonical(obj[k], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * A fast sufficient test that `text` is exactly the canonical JSON of `value`
 * (typically `value = JSON.parse(text)`, what a verifier checks per line).
 * When it returns `true`, `tryCanonicalJson(value)` is `{ ok: true, text }`;
 * `false` decides nothing: ask {@link tryCanonicalJson}.
 *
 * Why it is sound for any pair: with keys already in code-unit order and only
 * canonical scalars, `JSON.stringify` writes the canonical encoding, except
 * that it escapes a lone surrogate as `\u…` where canonical JSON has none;
 * a text holding `\u` is therefore never accepted here.
 *
 * @example
 * isCanonicalParse(JSON.parse('{"a":1,"b":[true]}'), '{"a":1,"b":[true]}') // true
 * isCanonicalParse(JSON.parse('{"b":1,"a":2}'), '{"b":1,"a":2}')           // false
 */
export function isCanonicalParse(value: unknown, text: string): boolean {
  return !text.includes('\\u') && plainCanonical(value, 0) && JSON.stringify(value) === text;
}

/**
 * Canonical JSON text of `value`; throws `TALLY_CANONICAL_<PROBLEM>` when the
 * value is outside the canonical domain (a programming error for engine data).
 */
export function canonicalJson(value: CanonicalValue): string {
  const r = tryCanonicalJson(value);
  if (r.ok) return r.text;
  throw new TallyError(
    `TALLY_CANONICAL_${r.problem.code.toUpperCase().replace(/-/g, '_')}`,
    `Value cannot be canonicalized: ${r.problem.code}.`,
    { details: `at ${r.problem.path || '/'}` },
  );
}

/** UTF-8 bytes of {@link canonicalJson}. */
export function canonicalBytes(value: CanonicalValue): Uint8Array {
  return encoder.encode(canonicalJson(value));
}

/** UTF-8 encoding of a well-formed string. */
export function utf8(s: string): Uint8Array {
  return encoder.encode(s);
}
