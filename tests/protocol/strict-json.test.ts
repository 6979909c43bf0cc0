/**
 * parseStrictJson: the one parser for JSON from outside. It agrees with
 * JSON.parse on every RFC 8259 text without duplicate keys, lone surrogates,
 * a BOM or nesting past the limit, and refuses each of those with its code.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JSON_MAX_DEPTH, parseStrictJson } from '../../src/protocol/index.js';

const enc = new TextEncoder();
const deep = (levels: number, open = '[', close = ']'): string => open.repeat(levels) + close.repeat(levels);

describe('parseStrictJson', () => {
  it('equals JSON.parse on well-formed JSON, as text and as bytes, with any whitespace (seed 0x5ec7)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6, noUnicodeString: false }), fc.constantFrom(0, 2), (v, indent) => {
        const text = JSON.stringify(v, null, indent);
        const want = JSON.parse(text) as unknown;
        expect(parseStrictJson(text)).toEqual({ ok: true, value: want });
        expect(parseStrictJson(enc.encode(text))).toEqual({ ok: true, value: want });
      }),
      { seed: 0x5ec7, numRuns: 400 },
    );
  });

  it.each([
    ['{"verdict":"DENY","verdict":"ALLOW"}', 'duplicate-key'],
    ['[{"a":1,"b":{"c":1,"c":1}}]', 'duplicate-key'],
    ['{"a":1,"\\u0061":2}', 'duplicate-key'],
    ['"a\\ud800"', 'lone-surrogate'],
    ['"a\\udfff"', 'lone-surrogate'],
    ['"\\ud800\\u0041"', 'lone-surrogate'],
    ['{"\\udc00":1}', 'lone-surrogate'],
    ['\uFEFF{}', 'bom'],
    ['{} x', 'trailing-data'],
    ['{}{}', 'trailing-data'],
    ['{"a":01}', 'syntax'],
    ["{'a':1}", 'syntax'],
    ['[1,]', 'syntax'],
    ['"\t"', 'syntax'],
    ['"\\x41"', 'syntax'],
    ['NaN', 'syntax'],
    ['', 'syntax'],
  ])('%j is refused as %s', (text, code) => {
    expect(parseStrictJson(text)).toMatchObject({ ok: false, code });
  });

  it('keeps a surrogate pair and the U+FFFD character as they are', () => {
    expect(parseStrictJson('"\\ud83d\\ude00"')).toEqual({ ok: true, value: '\u{1f600}' });
    expect(parseStrictJson('"a\ufffd"')).toEqual({ ok: true, value: 'a\ufffd' });
    expect(parseStrictJson('"a\ud800"')).toMatchObject({ ok: false, code: 'lone-surrogate' });
  });

  it('refuses bytes: a BOM, ill-formed UTF-8 and an encoded surrogate, never repairing them', () => {
    expect(parseStrictJson(Uint8Array.of(0xef, 0xbb, 0xbf, 0x7b, 0x7d))).toMatchObject({ ok: false, code: 'bom' });
    expect(parseStrictJson(Uint8Array.of(0x22, 0xff, 0x22))).toMatchObject({ ok: false, code: 'invalid-utf8' });
    expect(parseStrictJson(Uint8Array.of(0x22, 0xed, 0xa0, 0x80, 0x22))).toMatchObject({ ok: false, code: 'invalid-utf8' });
  });

  it(`nests to exactly ${JSON_MAX_DEPTH} levels (the outermost container is level 1)`, () => {
    expect(parseStrictJson(deep(JSON_MAX_DEPTH)).ok).toBe(true);
    expect(parseStrictJson(deep(JSON_MAX_DEPTH + 1))).toMatchObject({ ok: false, code: 'too-deep' });
    expect(parseStrictJson(`{"a":${deep(JSON_MAX_DEPTH - 1)}}`).ok).toBe(true);
    expect(parseStrictJson(`{"a":${deep(JSON_MAX_DEPTH)}}`)).toMatchObject({ ok: false, code: 'too-deep' });
    expect(parseStrictJson(deep(3), { maxDepth: 2 })).toMatchObject({ ok: false, code: 'too-deep' });
    // A hostile depth is refused, not a stack overflow.
    expect(parseStrictJson(deep(200_000))).toMatchObject({ ok: false, code: 'too-deep' });
  });

  it('a "__proto__" member is data, not a prototype change', () => {
    const r = parseStrictJson('{"__proto__":{"x":1}}');
    expect(r.ok && Object.getPrototypeOf(r.value)).toBe(Object.prototype);
    expect(r.ok && Object.keys(r.value as object)).toEqual(['__proto__']);
  });
});
