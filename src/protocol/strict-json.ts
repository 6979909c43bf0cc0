/**
 * THE parser for every JSON text Tally takes from outside (bundle lines,
 * authored intents, spec and mandate files, judge replies, wire bodies, note
 * and proof files). RFC 8259 grammar, and it refuses — never repairs — what
 * `JSON.parse` silently accepts or rewrites:
 *
 * - `invalid-utf8`: bytes that are not well-formed UTF-8 (an encoded surrogate
 *   included); never replaced by U+FFFD.
 * - `bom`: a byte order mark (EF BB BF / U+FEFF) before the value.
 * - `duplicate-key`: an object naming the same member twice (JSON.parse keeps
 *   the last one).
 * - `lone-surrogate`: a string holding an unpaired UTF-16 surrogate, written
 *   raw or as a `\uD800`-style escape.
 * - `too-deep`: more than {@link JSON_MAX_DEPTH} levels of arrays and objects.
 *   Counting rule: the outermost array or object is level 1, a container
 *   directly inside it level 2, and so on; scalars add no level.
 * - `trailing-data`: anything but whitespace after the value.
 * - `syntax`: anything else outside RFC 8259.
 *
 * Pure: no I/O, iterative over the text, recursion bounded by the depth limit.
 */

/** Most levels of nesting accepted anywhere in Tally (see the counting rule above). */
export const JSON_MAX_DEPTH = 64;

/** Why a text was refused by {@link parseStrictJson}. */
export type StrictJsonCode = 'invalid-utf8' | 'bom' | 'duplicate-key' | 'lone-surrogate' | 'too-deep' | 'trailing-data' | 'syntax';
/** Runtime tuple of every {@link StrictJsonCode}. */
export const STRICT_JSON_CODES = ['invalid-utf8', 'bom', 'duplicate-key', 'lone-surrogate', 'too-deep', 'trailing-data', 'syntax'] as const satisfies readonly StrictJsonCode[];

/** Outcome of {@link parseStrictJson}: the value, or a typed refusal at a UTF-16 offset of the decoded text. */
export type StrictJsonResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly code: StrictJsonCode; readonly offset: number; readonly message: string };

/** Options of {@link parseStrictJson}. */
export interface StrictJsonOptions {
  /** Most levels of nesting (default {@link JSON_MAX_DEPTH}); the outermost container is level 1. */
  readonly maxDepth?: number;
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

class Refusal {
  constructor(
    readonly code: StrictJsonCode,
    readonly offset: number,
    readonly message: string,
  ) {}
}

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

class Parser {
  i = 0;
  constructor(
    readonly s: string,
    readonly maxDepth: number,
  ) {}

  fail(code: StrictJsonCode, message: string, at = this.i): never {
    throw new Refusal(code, at, message);
  }

  ws(): void {
    const s = this.s;
    while (this.i < s.length && isWs(s.charCodeAt(this.i))) this.i++;
  }

  value(depth: number): unknown {
    this.ws();
    const s = this.s;
    const c = s.charCodeAt(this.i);
    switch (c) {
      case 0x7b:
        return this.object(depth + 1);
      case 0x5b:
        return this.array(depth + 1);
      case 0x22:
        return this.string();
      case 0x74:
        return this.word('true', true);
      case 0x66:
        return this.word('false', false);
      case 0x6e:
        return this.word('null', null);
      default: {
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
          NUMBER.lastIndex = this.i;
          const m = NUMBER.exec(s);
          if (m) {
            this.i += m[0].length;
            return Number(m[0]);
          }
        }
        if (Number.isNaN(c)) this.fail('syntax', 'unexpected end of JSON');
        if (c === 0xfeff) this.fail('bom', 'a byte order mark is not JSON');
        return this.fail('syntax', `unexpected character at offset ${this.i}`);
      }
    }
  }

  word<T>(w: string, v: T): T {
    if (!this.s.startsWith(w, this.i)) this.fail('syntax', `unexpected character at offset ${this.i}`);
    this.i += w.length;
    return v;
  }

  enter(depth: number): void {
    if (depth > this.maxDepth) this.fail('too-deep', `JSON nests deeper than ${this.maxDepth} levels`);
    this.i++;
  }

  object(depth: number): Record<string, unknown> {
    this.enter(depth);
    const out: Record<string, unknown> = {};
    const seen = new Set<string>();
    this.ws();
    if (this.s.charCodeAt(this.i) === 0x7d) {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s.charCodeAt(this.i) !== 0x22) this.fail('syntax', `expected a member name at offset ${this.i}`);
      const at = this.i;
      const key = this.string();
      if (seen.has(key)) this.fail('duplicate-key', `duplicate member name ${JSON.stringify(key)} at offset ${at}`, at);
      seen.add(key);
      this.ws();
      if (this.s.charCodeAt(this.i) !== 0x3a) this.fail('syntax', `expected ':' at offset ${this.i}`);
      this.i++;
      const v = this.value(depth);
      // A member named "__proto__" is data, as with JSON.parse (not a prototype change).
      if (key === '__proto__') Object.defineProperty(out, key, { value: v, writable: true, enumerable: true, configurable: true });
      else out[key] = v;
      this.ws();
      const c = this.s.charCodeAt(this.i);
      this.i++;
      if (c === 0x7d) return out;
      if (c !== 0x2c) this.fail('syntax', `expected ',' or '}' at offset ${this.i - 1}`, this.i - 1);
    }
  }

  array(depth: number): unknown[] {
    this.enter(depth);
    const out: unknown[] = [];
    this.ws();
    if (this.s.charCodeAt(this.i) === 0x5d) {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth));
      this.ws();
      const c = this.s.charCodeAt(this.i);
      this.i++;
      if (c === 0x5d) return out;
      if (c !== 0x2c) this.fail('syntax', `expected ',' or ']' at offset ${this.i - 1}`, this.i - 1);
    }
  }

  string(): string {
    const s = this.s;
    const start = ++this.i;
    let out = '';
    let chunk = start;
    for (;;) {
      const c = s.charCodeAt(this.i);
      if (Number.isNaN(c)) this.fail('syntax', 'unterminated string');
      if (c === 0x22) {
        out += s.slice(chunk, this.i);
        this.i++;
        return out;
      }
      if (c < 0x20) this.fail('syntax', `control character in a string at offset ${this.i}`);
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = s.charCodeAt(this.i + 1);
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
          this.i += 2;
          continue;
        }
        this.fail('lone-surrogate', `unpaired surrogate at offset ${this.i}`);
      }
      if (c !== 0x5c) {
        this.i++;
        continue;
      }
      out += s.slice(chunk, this.i);
      const e = s.charCodeAt(this.i + 1);
      this.i += 2;
      switch (e) {
        case 0x22: out += '"'; break;
        case 0x5c: out += '\\'; break;
        case 0x2f: out += '/'; break;
        case 0x62: out += '\b'; break;
        case 0x66: out += '\f'; break;
        case 0x6e: out += '\n'; break;
        case 0x72: out += '\r'; break;
        case 0x74: out += '\t'; break;
        case 0x75: {
          const u = this.hex4(this.i);
          this.i += 4;
          if (u >= 0xd800 && u <= 0xdbff) {
            const low = s.charCodeAt(this.i) === 0x5c && s.charCodeAt(this.i + 1) === 0x75 ? this.hex4(this.i + 2) : -1;
            if (!(low >= 0xdc00 && low <= 0xdfff)) this.fail('lone-surrogate', `unpaired surrogate escape at offset ${this.i - 6}`, this.i - 6);
            this.i += 6;
            out += String.fromCharCode(u, low);
          } else if (u >= 0xdc00 && u <= 0xdfff) {
            this.fail('lone-surrogate', `unpaired surrogate escape at offset ${this.i - 6}`, this.i - 6);
          } else {
            out += String.fromCharCode(u);
          }
          break;
        }
        default:
          this.fail('syntax', `invalid escape at offset ${this.i - 2}`, this.i - 2);
      }
      chunk = this.i;
    }
  }

  hex4(at: number): number {
    let u = 0;
    for (let k = 0; k < 4; k++) {
      const h = hexValue(this.s.charCodeAt(at + k));
      if (h < 0) this.fail('syntax', `invalid \\u escape at offset ${at - 2}`, at - 2);
      u = u * 16 + h;
    }
    return u;
  }
}

/**
 * Parses one JSON text from outside under Tally's one encoding rule (see the
 * module comment for every refusal). Bytes are decoded as strict UTF-8 with
 * the BOM kept (so it is refused, not skipped); a string is taken as is.
 * Returns a result; never throws on data.
 *
 * @example
 * parseStrictJson('{"a":1}')          // { ok: true, value: { a: 1 } }
 * parseStrictJson('{"a":1,"a":2}')    // { ok: false, code: 'duplicate-key', … }
 * parseStrictJson('"\\ud800"')        // { ok: false, code: 'lone-surrogate', … }
 */
export function parseStrictJson(input: string | Uint8Array, options: StrictJsonOptions = {}): StrictJsonResult {
  let text: string;
  if (typeof input === 'string') text = input;
  else {
    try {
      text = decoder.decode(input);
    } catch {
      return { ok: false, code: 'invalid-utf8', offset: 0, message: 'the bytes are not well-formed UTF-8' };
    }
  }
  if (text.charCodeAt(0) === 0xfeff) return { ok: false, code: 'bom', offset: 0, message: 'a byte order mark is not JSON' };
  const p = new Parser(text, options.maxDepth ?? JSON_MAX_DEPTH);
  try {
    const value = p.value(0);
    p.ws();
    if (p.i < text.length) return { ok: false, code: 'trailing-data', offset: p.i, message: `data after the JSON value at offset ${p.i}` };
    return { ok: true, value };
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, code: e.code, offset: e.offset, message: e.message };
    throw e;
  }
}
