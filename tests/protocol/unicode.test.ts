import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { hasLoneSurrogate } from '../../src/protocol/unicode.js';

/** Independent reference: walk the code units, pairing each high surrogate with a following low one. */
function scan(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
      else return true;
    } else if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

// Strings dense in surrogates, paired and not.
const units = fc.array(fc.constantFrom(0x41, 0xe9, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xd83d, 0xde00), { maxLength: 12 }).map((cs) => String.fromCharCode(...cs));
const strings = fc.oneof(units, fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }));

const CASES: Array<[string, boolean]> = [
  ['', false],
  ['plain', false],
  ['\ud83d\ude00', false],
  ['a\ud800', true],
  ['\udc00a', true],
  ['\ude00\ud83d', true],
  ['\ufffd', false],
];

describe('hasLoneSurrogate (the one lone-surrogate rule)', () => {
  it.each(CASES)('%j → %s', (s, lone) => expect(hasLoneSurrogate(s)).toBe(lone));

  it('agrees with a code-unit scan (seed 0x5a7e)', () => {
    fc.assert(fc.property(strings, (s) => hasLoneSurrogate(s) === scan(s)), { seed: 0x5a7e, numRuns: 1000 });
  });

  it('gives the same answers on a runtime without String.prototype.isWellFormed (the regular-expression path)', async () => {
    const proto = String.prototype as { isWellFormed?: unknown };
    const saved = Object.getOwnPropertyDescriptor(String.prototype, 'isWellFormed');
    expect(saved, 'this Node has isWellFormed, so the native path is the one tested above').toBeDefined();
    delete proto.isWellFormed;
    try {
      vi.resetModules();
      const fallback = (await import('../../src/protocol/unicode.js')).hasLoneSurrogate;
      expect(fallback).not.toBe(hasLoneSurrogate);
      for (const [s, lone] of CASES) expect(fallback(s), JSON.stringify(s)).toBe(lone);
      fc.assert(fc.property(strings, (s) => fallback(s) === scan(s)), { seed: 0x5a7e, numRuns: 1000 });
    } finally {
      Object.defineProperty(String.prototype, 'isWellFormed', saved!);
      vi.resetModules();
    }
  });
});
