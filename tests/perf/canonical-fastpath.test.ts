/**
 * The lazy-path canonical encoder (src/protocol/canonical.ts) against a frozen
 * copy of the encoder it replaced: same text for every canonical value, same
 * problem code AND path for every value outside the domain.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCanonicalParse, tryCanonicalJson } from '../../src/protocol/canonical.js';
import { canonicalEntryText } from '../../src/protocol/chain.js';
import { canonicalJson, parseEntry, toBase64, type CanonicalValue, type Entry } from '../../src/protocol/index.js';

// ---- frozen reference (the encoder before the fast path) ----
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
class P {
  constructor(readonly problem: { code: string; path: string }) {}
}
function refString(s: string, path: string): string {
  if (LONE.test(s)) throw new P({ code: 'lone-surrogate', path });
  return JSON.stringify(s);
}
function ref(v: unknown, path: string, depth: number): string {
  switch (typeof v) {
    case 'string':
      return refString(v, path);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(v)) throw new P({ code: 'non-finite-number', path });
      if (!Number.isInteger(v)) throw new P({ code: 'non-integer-number', path });
      if (!Number.isSafeInteger(v)) throw new P({ code: 'unsafe-integer', path });
      return v === 0 ? '0' : String(v);
    case 'object': {
      if (v === null) throw new P({ code: 'null', path });
      if (depth >= 64) throw new P({ code: 'too-deep', path });
      if (Array.isArray(v)) {
        let out = '[';
        for (let i = 0; i < v.length; i++) {
          if (i > 0) out += ',';
          const item: unknown = v[i];
          if (item === undefined) throw new P({ code: 'unsupported-type', path: `${path}/${i}` });
          out += ref(item, `${path}/${i}`, depth + 1);
        }
        return out + ']';
      }
      const proto: unknown = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw new P({ code: 'unsupported-type', path });
      const obj = v as Record<string, unknown>;
      let out = '{';
      let first = true;
      for (const k of Object.keys(obj).sort()) {
        const item = obj[k];
        if (item === undefined) continue;
        const p = `${path}/${k}`;
        if (!first) out += ',';
        first = false;
        out += refString(k, p) + ':' + ref(item, p, depth + 1);
      }
      return out + '}';
    }
    default:
      throw new P({ code: 'unsupported-type', path });
  }
}
function reference(value: unknown): { ok: true; text: string } | { ok: false; problem: { code: string; path: string } } {
  try {
    return { ok: true, text: ref(value, '', 0) };
  } catch (e) {
    if (e instanceof P) return { ok: false, problem: e.problem };
    throw e;
  }
}

// Strings rich in the characters that need care: quotes, backslashes, controls, surrogates.
const tricky = fc.oneof(
  fc.string(),
  fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\uD800', '\uDC00', '\uD83D\uDE00', 'é') }),
);
const leaf = fc.oneof(tricky, fc.integer(), fc.boolean(), fc.double(), fc.constant(null), fc.constant(undefined), fc.bigInt().map((b) => Number(b)), fc.constant(-0));
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.array(tie('v'), { maxLength: 4 }), fc.dictionary(tricky, tie('v'), { maxKeys: 4 })),
})).v;

describe('canonical fast path', () => {
  it('matches the frozen reference on random values, text and problem path (seed 0xca11)', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(tryCanonicalJson(v)).toEqual(reference(v));
      }),
      { seed: 0xca11, numRuns: 3000 },
    );
  });

  it('matches on too-deep nesting and on a problem deep inside', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 70; i++) deep = i % 2 ? [deep] : { ['k' + i]: deep };
    expect(tryCanonicalJson(deep)).toEqual(reference(deep));
    const late = { a: [1, 2, { b: { c: ['ok', 'x\uD800'] } }] };
    expect(tryCanonicalJson(late)).toEqual({ ok: false, problem: { code: 'lone-surrogate', path: '/a/2/b/c/1' } });
    expect(tryCanonicalJson({ 'k\uDC00': 1 })).toEqual(reference({ 'k\uDC00': 1 }));
    expect(tryCanonicalJson([1, undefined])).toEqual({ ok: false, problem: { code: 'unsupported-type', path: '/1' } });
  });

  // Texts near the canonical form: the canonical text itself, and spellings of
  // the same value that are not canonical (spaces, escapes, number forms,
  // reordered and duplicate keys).
  const variants = (text: string): string[] => [
    text,
    text.replace(/,/g, ', '),
    ` ${text}`,
    text.replace(/"a/g, '"\\u0061'),
    text.replace(/\//g, '\\/'),
    text.replace(/:1([,}\]])/g, ':1.0$1'),
    text.replace(/:100([,}\]])/g, ':1e2$1'),
    text.replace(/:0([,}\]])/g, ':-0$1'),
    text.replace(/^\{/, '{"a":1,'),
    text.replace(/^\{"([^"]*)":/, '{"$1":0,"$1":'),
  ];

  it('isCanonicalParse is sound: true only when the text is the canonical encoding (seed 0xca12)', () => {
    let proven = 0;
    fc.assert(
      fc.property(value, fc.boolean(), (v, reorder) => {
        const c = reference(v);
        if (!c.ok) return;
        const base = reorder ? JSON.stringify(v) : c.text;
        for (const t of variants(base ?? '')) {
          let parsed: unknown;
          try {
            parsed = JSON.parse(t);
          } catch {
            continue;
          }
          if (isCanonicalParse(parsed, t)) {
            proven++;
            expect(tryCanonicalJson(parsed)).toEqual({ ok: true, text: t });
          }
          // The fast test must also hold (or refuse) on pairs that are not a parse.
          if (isCanonicalParse(v, t)) expect(tryCanonicalJson(v)).toEqual({ ok: true, text: t });
        }
      }),
      { seed: 0xca12, numRuns: 3000 },
    );
    expect(proven).toBeGreaterThan(1000);
  });

  it('isCanonicalParse refuses look-alikes', () => {
    expect(isCanonicalParse({ a: 'x"y' }, '{"a":"x"y"}')).toBe(false);
    expect(isCanonicalParse({ a: 1 }, '{"a":1 }')).toBe(false);
    expect(isCanonicalParse({ b: 1, a: 2 }, '{"b":1,"a":2}')).toBe(false);
    expect(isCanonicalParse({ a: 100 }, '{"a":1e2}')).toBe(false);
    expect(isCanonicalParse({ a: 'A' }, '{"a":"\\u0041"}')).toBe(false);
    expect(isCanonicalParse(JSON.parse('{"a":"\uD800"}'), '{"a":"\uD800"}')).toBe(false);
    expect(isCanonicalParse({ a: [1, true, 'é'] }, '{"a":[1,true,"é"]}')).toBe(true);
  });

  it('canonicalEntryText writes exactly the canonical bytes of every entry kind (seed 0xca13)', () => {
    const hex = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
    const obj = fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean()), { maxKeys: 3 });
    const ordinal = fc.oneof(fc.integer({ min: -1, max: 1000 }), fc.constant(-0), fc.constant(2 ** 40));
    const entry: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
      fc.record({ kind: fc.constant('genesis'), protocol: fc.constant('tally/1'), spec: fc.record({ name: fc.constantFrom('a', 'day 1', 'é'), extra: obj }) }),
      fc.record({ kind: fc.constant('frame'), session: hex, ordinal, parent: hex, time: fc.nat(), frameRoot: hex, data: obj }, { requiredKeys: ['kind', 'session', 'ordinal', 'parent', 'time', 'frameRoot'] }),
      fc.record(
        {
          kind: fc.constant('turn'),
          session: hex,
          ordinal,
          parent: hex,
          frameRoot: hex,
          body: fc.oneof(fc.record({ kind: fc.constant('authored'), bytes: fc.uint8Array({ maxLength: 40 }).map(toBase64), hash: hex }), fc.record({ kind: fc.constant('stand-down'), failureClass: fc.constantFrom('provider', 'timeout', 'malformed') })),
          ruling: obj,
        },
        { requiredKeys: ['kind', 'session', 'ordinal', 'parent', 'frameRoot', 'body'] },
      ),
      fc.record({ kind: fc.constant('finalize'), session: hex, parent: hex, size: fc.integer({ min: 1, max: 2 ** 40 }), root: hex, artifacts: obj }, { requiredKeys: ['kind', 'session', 'parent', 'size', 'root'] }),
    );
    fc.assert(
      fc.property(entry, (e) => {
        const parsed = parseEntry(e);
        expect(parsed.ok).toBe(true);
        expect(canonicalEntryText(e as unknown as Entry)).toBe(canonicalJson(e as CanonicalValue));
      }),
      { seed: 0xca13, numRuns: 2000 },
    );
  });
});
