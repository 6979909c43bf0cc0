/**
 * Engine-log leaf bytes (PROTOCOL.md §15.1): the exact bytes, their hash
 * reproduced by hand, and strict reading — every spelling but the canonical
 * one refused.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/codec/index.js';
import { engineLogLeafBytes, parseEngineLogLeaf, specHash, type EngineLogLeaf } from '../../src/protocol/index.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const A = 'ab'.repeat(32);
const B = '0c'.repeat(32);
const tagged = (json: string) => new Uint8Array([...enc.encode('tally/v1/engine-log-leaf'), 0, ...enc.encode(json)]);

describe('engine log leaf bytes', () => {
  it('are the tag, NUL and the canonical JSON of the leaf (members in code-point order)', () => {
    expect(engineLogLeafBytes({ kind: 'open', session: A, spec: B })).toEqual(tagged(`{"kind":"open","session":"${A}","spec":"${B}"}`));
    expect(engineLogLeafBytes({ kind: 'checkpoint', origin: 'tally.example/desk/' + A, size: 14, root: B, seal: true })).toEqual(
      tagged(`{"kind":"checkpoint","origin":"tally.example/desk/${A}","root":"${B}","seal":true,"size":14}`),
    );
  });

  it('the spec hash is SHA-256 of "tally/v1/spec" NUL canonical spec', () => {
    // printf 'tally/v1/spec\0{"a":1,"name":"x"}' | sha256sum
    const want = createHash('sha256').update(Buffer.concat([Buffer.from('tally/v1/spec\0'), Buffer.from('{"a":1,"name":"x"}')])).digest('hex');
    expect(specHash(sha256, { name: 'x', a: 1 })).toBe(want);
  });

  it('round-trips every leaf it writes (fast-check, seed 0x1eaf)', () => {
    const hex = fc.stringMatching(/^[0-9a-f]{64}$/);
    const leaf: fc.Arbitrary<EngineLogLeaf> = fc.oneof(
      fc.record({ kind: fc.constant('open' as const), session: hex, spec: hex }),
      fc.record({ kind: fc.constant('checkpoint' as const), origin: fc.stringMatching(/^[a-z./0-9]{1,40}$/), size: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), root: hex, seal: fc.boolean() }),
    );
    fc.assert(
      fc.property(leaf, (l) => {
        expect(parseEngineLogLeaf(engineLogLeafBytes(l))).toEqual({ ok: true, leaf: l });
      }),
      { seed: 0x1eaf },
    );
  });

  it('refuses every other spelling, by code', () => {
    const good = engineLogLeafBytes({ kind: 'checkpoint', origin: 'o/x', size: 3, root: A, seal: false });
    const json = dec.decode(good.subarray(25));
    const cases: [Uint8Array, string][] = [
      [enc.encode(json), 'leaf-tag'],
      [tagged(json).subarray(1), 'leaf-tag'],
      [new Uint8Array([...enc.encode('tally/v1/engine-log-lea'), 0, ...enc.encode(json)]), 'leaf-tag'],
      [tagged(json + ' '), 'leaf-not-canonical'],
      [tagged(json.slice(0, -1)), 'leaf-json'],
      [tagged(json.replace('{', '{"kind":"open",')), 'leaf-json'],
      [tagged(`{"kind":"checkpoint","root":"${A}","origin":"o/x","seal":false,"size":3}`), 'leaf-not-canonical'],
      [tagged(`{"kind":"checkpoint","origin":"o/x","root":"${A}","seal":false,"size":3,"x":1}`), 'leaf-shape'],
      [tagged(`{"kind":"checkpoint","origin":"o/x","root":"${A}","seal":false,"size":0}`), 'leaf-shape'],
      [tagged(`{"kind":"checkpoint","origin":"o/x","root":"${A.toUpperCase()}","seal":false,"size":3}`), 'leaf-shape'],
      [tagged(`{"kind":"checkpoint","origin":"o x","root":"${A}","seal":false,"size":3}`), 'leaf-shape'],
      [tagged(`{"kind":"checkpoint","origin":"o/x","root":"${A}","seal":1,"size":3}`), 'leaf-shape'],
      [tagged(`{"kind":"open","session":"${A}"}`), 'leaf-shape'],
      [tagged(`{"kind":"close","session":"${A}","spec":"${A}"}`), 'leaf-shape'],
      [tagged('[]'), 'leaf-shape'],
    ];
    expect(parseEngineLogLeaf(good).ok).toBe(true);
    for (const [bytes, code] of cases) expect(parseEngineLogLeaf(bytes), dec.decode(bytes)).toMatchObject({ ok: false, code });
  });

  it('refuses to write a leaf the protocol does not allow', () => {
    expect(() => engineLogLeafBytes({ kind: 'open', session: 'x', spec: B })).toThrow(RangeError);
    expect(() => engineLogLeafBytes({ kind: 'checkpoint', origin: '', size: 1, root: A, seal: true })).toThrow(/origin/);
    expect(() => engineLogLeafBytes({ kind: 'checkpoint', origin: 'o', size: 1.5, root: A, seal: true })).toThrow(/size/);
  });
});
