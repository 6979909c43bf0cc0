import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { TLOG_PROOF_CODES, checkpointOrigin, formatCheckpoint, formatTlogProof, parseCheckpoint, parseTlogProof } from '../../src/receipt/checkpoint/index.js';
import { generateEngineKey } from '../../src/receipt/keys/index.js';
import { openNote, signNote } from '../../src/receipt/note/index.js';
import { TallyError } from '../../src/protocol/errors.js';

const H = (n: number): Uint8Array => new Uint8Array(32).fill(n);
const b64 = (u: Uint8Array): string => Buffer.from(u).toString('base64');
const CP = 'o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n\u2014 o AAAAAQ==\n';

function code(r: ReturnType<typeof parseTlogProof>): string {
  return r.ok ? 'ok' : r.code;
}

describe('formatTlogProof', () => {
  test('layout without extra data (same bytes as transparency-dev/formats Marshal)', () => {
    expect(formatTlogProof({ index: 5, proof: [H(1), H(2)], signedCheckpoint: CP })).toBe(
      `c2sp.org/tlog-proof@v1\nindex 5\n${b64(H(1))}\n${b64(H(2))}\n\n${CP}`,
    );
  });

  test('layout with extra data: the extra line comes before the index line', () => {
    const extra = new TextEncoder().encode('extra information');
    expect(formatTlogProof({ index: 10, proof: [H(1)], signedCheckpoint: CP, extraData: extra })).toBe(
      `c2sp.org/tlog-proof@v1\nextra ${b64(extra)}\nindex 10\n${b64(H(1))}\n\n${CP}`,
    );
  });

  test('empty proof', () => {
    expect(formatTlogProof({ index: 0, proof: [], signedCheckpoint: CP })).toBe(`c2sp.org/tlog-proof@v1\nindex 0\n\n${CP}`);
  });

  test('refuses bad input', () => {
    for (const f of [
      () => formatTlogProof({ index: -1, proof: [], signedCheckpoint: CP }),
      () => formatTlogProof({ index: 2 ** 53, proof: [], signedCheckpoint: CP }),
      () => formatTlogProof({ index: 0, proof: [new Uint8Array(31)], signedCheckpoint: CP }),
      () => formatTlogProof({ index: 0, proof: Array.from({ length: 65 }, () => H(0)), signedCheckpoint: CP }),
      () => formatTlogProof({ index: 0, proof: [], signedCheckpoint: '' }),
      () => formatTlogProof({ index: 0, proof: [], signedCheckpoint: 'no newline' }),
      () => formatTlogProof({ index: 0, proof: [], signedCheckpoint: `\n${CP}` }),
    ]) {
      expect(f).toThrow(TallyError);
    }
  });
});

describe('parseTlogProof', () => {
  const good = formatTlogProof({ index: 3, proof: [H(1), H(2)], signedCheckpoint: CP });

  test('parses the fields back', () => {
    const r = parseTlogProof(good);
    expect(r.ok && [r.tlogProof.index, r.tlogProof.proof.map(b64), r.tlogProof.signedCheckpoint, 'extraData' in r.tlogProof]).toEqual([3, [b64(H(1)), b64(H(2))], CP, false]);
  });

  const bad: [string, string, string][] = [
    ['wrong header', good.replace('tlog-proof@v1', 'tlog-proof@v2'), 'bad-header'],
    ['header without newline', 'c2sp.org/tlog-proof@v1', 'bad-header'],
    ['invalid extra', `c2sp.org/tlog-proof@v1\nextra !!notbase64!!\nindex 0\n\n${CP}`, 'bad-extra'],
    ['missing index', `c2sp.org/tlog-proof@v1\n\n\n${CP}`, 'bad-index'],
    ['index not a number', `c2sp.org/tlog-proof@v1\nindex notanumber\n\n${CP}`, 'bad-index'],
    ['negative index', `c2sp.org/tlog-proof@v1\nindex -5\n\n${CP}`, 'bad-index'],
    ['leading zero index', `c2sp.org/tlog-proof@v1\nindex 07\n\n${CP}`, 'bad-index'],
    ['index with two spaces', `c2sp.org/tlog-proof@v1\nindex  7\n\n${CP}`, 'bad-index'],
    ['extra after index', `c2sp.org/tlog-proof@v1\nindex 7\nextra AAAA\n\n${CP}`, 'bad-proof-hash'],
    ['index above 2^53-1', `c2sp.org/tlog-proof@v1\nindex 9007199254740992\n\n${CP}`, 'index-out-of-range'],
    ['hash not base64', `c2sp.org/tlog-proof@v1\nindex 0\n!!notbase64!!\n\n${CP}`, 'bad-proof-hash'],
    ['64-byte hash', `c2sp.org/tlog-proof@v1\nindex 0\n${b64(new Uint8Array(64))}\n\n${CP}`, 'bad-proof-hash'],
    ['65 hashes', `c2sp.org/tlog-proof@v1\nindex 0\n${`${b64(H(0))}\n`.repeat(65)}\n${CP}`, 'proof-too-long'],
    ['no blank line', `c2sp.org/tlog-proof@v1\nindex 0\n${b64(H(0))}\n`, 'missing-checkpoint'],
    ['nothing after blank line', `c2sp.org/tlog-proof@v1\nindex 0\n\n`, 'missing-checkpoint'],
    ['checkpoint without final newline', `c2sp.org/tlog-proof@v1\nindex 0\n\n${CP.slice(0, -1)}`, 'missing-checkpoint'],
    ['two blank lines', `c2sp.org/tlog-proof@v1\nindex 0\n\n\n${CP}`, 'missing-checkpoint'],
  ];
  test.each(bad)('rejects %s', (_label, text, expected) => {
    expect(code(parseTlogProof(text))).toBe(expected);
  });

  test('accepts 64 hashes and an empty extra', () => {
    expect(code(parseTlogProof(`c2sp.org/tlog-proof@v1\nindex 0\n${`${b64(H(0))}\n`.repeat(64)}\n${CP}`))).toBe('ok');
    const r = parseTlogProof(`c2sp.org/tlog-proof@v1\nextra \nindex 0\n\n${CP}`);
    expect(r.ok && r.tlogProof.extraData?.length).toBe(0);
  });

  test('end to end: a signed Tally checkpoint inside a proof opens and parses', () => {
    const key = generateEngineKey('tally.example/acme');
    const signedCheckpoint = signNote(formatCheckpoint({ origin: checkpointOrigin(key.name, 'cd'.repeat(32)), size: 4, root: H(9) }), [key]);
    const r = parseTlogProof(formatTlogProof({ index: 2, proof: [H(3), H(4)], signedCheckpoint }));
    if (!r.ok) throw new Error(r.message);
    const opened = openNote(r.tlogProof.signedCheckpoint, [key.verifierKey]);
    if (!opened.ok) throw new Error(opened.message);
    const cp = parseCheckpoint(opened.text);
    expect(cp.ok && cp.checkpoint.size).toBe(4);
  });

  test('codes are closed and stable', () => {
    expect(TLOG_PROOF_CODES).toEqual(['bad-header', 'bad-extra', 'bad-index', 'index-out-of-range', 'bad-proof-hash', 'proof-too-long', 'missing-checkpoint']);
  });

  test('parse ∘ format is the identity and format ∘ parse gives back the text (seed 0x9f00f)', () => {
    const arb = fc.record(
      {
        index: fc.maxSafeNat(),
        proof: fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { maxLength: 64 }),
        extraData: fc.uint8Array({ maxLength: 40 }),
        checkpointBody: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }).map((s) => `${s.replace(/^\n+/, 'x')}\n`),
      },
      { requiredKeys: ['index', 'proof', 'checkpointBody'] },
    );
    fc.assert(
      fc.property(arb, ({ index, proof, extraData, checkpointBody }) => {
        const input = extraData === undefined ? { index, proof, signedCheckpoint: checkpointBody } : { index, proof, signedCheckpoint: checkpointBody, extraData };
        const text = formatTlogProof(input);
        const r = parseTlogProof(text);
        if (!r.ok) return false;
        return (
          formatTlogProof(r.tlogProof) === text &&
          r.tlogProof.index === index &&
          r.tlogProof.signedCheckpoint === checkpointBody &&
          r.tlogProof.proof.length === proof.length &&
          (extraData === undefined ? r.tlogProof.extraData === undefined : Buffer.from(r.tlogProof.extraData!).equals(Buffer.from(extraData)))
        );
      }),
      { seed: 0x9f00f, numRuns: 300 },
    );
  });
});
