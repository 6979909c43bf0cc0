import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CANONICAL_MAX_DEPTH, canonicalJson, tryCanonicalJson, type CanonicalValue } from '../../src/protocol/index.js';

// An independent, deliberately naive RFC 8785 serializer for the values Tally
// accepts: manual code-unit key comparison and manual string escaping.
function naiveJcs(v: unknown): string {
  if (typeof v === 'string') {
    let out = '"';
    for (let i = 0; i < v.length; i++) {
      const c = v.charCodeAt(i);
      if (c === 0x22) out += '\\"';
      else if (c === 0x5c) out += '\\\\';
      else if (c === 0x08) out += '\\b';
      else if (c === 0x09) out += '\\t';
      else if (c === 0x0a) out += '\\n';
      else if (c === 0x0c) out += '\\f';
      else if (c === 0x0d) out += '\\r';
      else if (c < 0x20) out += '\\u' + c.toString(16).padStart(4, '0');
      else out += v[i];
    }
    return out + '"';
  }
  if (typeof v === 'number') return Object.is(v, -0) ? '0' : v.toString();
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return '[' + v.map(naiveJcs).join(',') + ']';
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined);
  keys.sort((a, b) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = a.charCodeAt(i) - b.charCodeAt(i);
      if (d !== 0) return d;
    }
    return a.length - b.length;
  });
  return '{' + keys.map((k) => naiveJcs(k) + ':' + naiveJcs(o[k])).join(',') + '}';
}

const wellFormed = (s: string): boolean => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

const canonicalArb = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ unit: 'grapheme' }),
    fc.string({ unit: 'binary' }).filter(wellFormed),
    fc.maxSafeInteger(),
    fc.boolean(),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.string({ unit: 'binary' }).filter(wellFormed), tie('value'), { maxKeys: 5 }),
  ),
})).value;

describe('canonical JSON', () => {
  it('sorts keys by UTF-16 code units (RFC 8785 §3.2.3 example)', () => {
    const input = { '\u20ac': 'Euro Sign', '\r': 'Carriage Return', '\ufb33': 'Hebrew Letter Dalet With Dagesh', '1': 'One', '\ud83d\ude00': 'Emoji: Grinning Face', '\u0080': 'Control', '\u00f6': 'Latin Small Letter O With Diaeresis' };
    const text = canonicalJson(input);
    const order = ['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33'].map((k) => text.indexOf(JSON.stringify(k) + ':'));
    expect(order.every((p) => p > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('escapes exactly as RFC 8785 requires', () => {
    expect(canonicalJson('\u0000\u001f"\\/\u007f\u2028é')).toBe('"\\u0000\\u001f\\"\\\\/\u007f\u2028é"');
    expect(canonicalJson('\b\t\n\f\r')).toBe('"\\b\\t\\n\\f\\r"');
  });

  it('writes integers plainly and -0 as 0', () => {
    expect(canonicalJson({ a: -0, b: 9007199254740991, c: -9007199254740991, d: 1e21 > 0 ? 10 : 0 })).toBe('{"a":0,"b":9007199254740991,"c":-9007199254740991,"d":10}');
  });

  it('omits undefined members, keeps no whitespace', () => {
    expect(canonicalJson({ z: [1, { y: true, x: 'a' }], a: undefined } as never)).toBe('{"z":[1,{"x":"a","y":true}]}');
  });

  it.each([
    [1.5, 'non-integer-number'],
    [Number.NaN, 'non-finite-number'],
    [Number.POSITIVE_INFINITY, 'non-finite-number'],
    [2 ** 53, 'unsafe-integer'],
    [null, 'null'],
    ['\ud800', 'lone-surrogate'],
    ['a\udc00', 'lone-surrogate'],
    [{ ['\udbff']: 1 }, 'lone-surrogate'],
    [10n, 'unsupported-type'],
    [new Date(0), 'unsupported-type'],
    [[undefined], 'unsupported-type'],
    [new Map(), 'unsupported-type'],
  ])('rejects %s as %s', (value, code) => {
    const r = tryCanonicalJson(value);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem.code).toBe(code);
  });

  it('rejects nesting beyond the depth limit without blowing the stack', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < CANONICAL_MAX_DEPTH + 1; i++) deep = [deep];
    const r = tryCanonicalJson(deep);
    expect(r.ok === false && r.problem.code).toBe('too-deep');
    let ok: unknown = 'x';
    for (let i = 0; i < CANONICAL_MAX_DEPTH; i++) ok = [ok];
    expect(tryCanonicalJson(ok).ok).toBe(true);
  });

  it('agrees with an independent RFC 8785 serializer and round-trips (seed 0x7a11)', () => {
    fc.assert(
      fc.property(canonicalArb, (v) => {
        const text = canonicalJson(v as CanonicalValue);
        expect(text).toBe(naiveJcs(v));
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { seed: 0x7a11, numRuns: 500 },
    );
  });

  it('is independent of key insertion order (seed 0x7a12)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.integer()), (d) => {
        const reversed = Object.fromEntries(Object.entries(d).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(d));
      }),
      { seed: 0x7a12, numRuns: 200 },
    );
  });
});
