import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { CHECKPOINT_CODES, checkpointOrigin, formatCheckpoint, isValidOrigin, parseCheckpoint } from '../../src/receipt/checkpoint/index.js';
import { generateEngineKey } from '../../src/receipt/keys/index.js';
import { openNote, signNote } from '../../src/receipt/note/index.js';
import { TallyError } from '../../src/protocol/errors.js';

const ROOT = new Uint8Array(32).map((_, i) => i);
const ROOT_B64 = Buffer.from(ROOT).toString('base64');
const SID = 'ab'.repeat(32);
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Sets the lowest (unused) bit of the last data character of a 32-byte base64 string. */
function withPadBit(s: string): string {
  const v = ALPHABET.indexOf(s[42]!);
  const out = `${s.slice(0, 42)}${ALPHABET[v | 1]!}=`;
  if (!Buffer.from(out, 'base64').equals(Buffer.from(s, 'base64')) || out === s) throw new Error('test helper broken');
  return out;
}

function code(r: ReturnType<typeof parseCheckpoint>): string {
  return r.ok ? 'ok' : r.code;
}

describe('checkpointOrigin', () => {
  test('is <engineName>/<sessionIdHex>', () => {
    expect(checkpointOrigin('tally.example/acme', SID)).toBe(`tally.example/acme/${SID}`);
  });

  test.each([
    ['bad engine name (space)', 'tally example', SID],
    ['bad engine name (+)', 'a+b', SID],
    ['empty engine name', '', SID],
    ['uppercase session hex', 'tally.example/acme', 'AB'.repeat(32)],
    ['short session id', 'tally.example/acme', 'ab'],
  ])('refuses %s', (_label, name, sid) => {
    expect(() => checkpointOrigin(name, sid)).toThrow(TallyError);
  });
});

describe('formatCheckpoint / parseCheckpoint', () => {
  test('layout: origin, decimal size, base64 root, extensions, each ending in \\n', () => {
    const origin = checkpointOrigin('tally.example/acme', SID);
    expect(formatCheckpoint({ origin, size: 0, root: ROOT })).toBe(`${origin}\n0\n${ROOT_B64}\n`);
    expect(formatCheckpoint({ origin, size: 42, root: ROOT, extensions: ['x y', 'z'] })).toBe(`${origin}\n42\n${ROOT_B64}\nx y\nz\n`);
  });

  test('a signed checkpoint verifies and parses back to its fields', () => {
    const key = generateEngineKey('tally.example/acme');
    const origin = checkpointOrigin(key.name, SID);
    const note = signNote(formatCheckpoint({ origin, size: 7, root: ROOT }), [key]);
    const opened = openNote(note, [key.verifierKey]);
    if (!opened.ok) throw new Error(opened.message);
    const cp = parseCheckpoint(opened.text);
    expect(cp.ok && { ...cp.checkpoint, root: Buffer.from(cp.checkpoint.root).toString('base64') }).toEqual({ origin, size: 7, root: ROOT_B64, extensions: [] });
  });

  const bad: [string, string, string][] = [
    ['no final newline', `o\n1\n${ROOT_B64}`, 'malformed-checkpoint'],
    ['two lines', `o\n1\n`, 'malformed-checkpoint'],
    ['control character', `o\u0007\n1\n${ROOT_B64}\n`, 'malformed-checkpoint'],
    ['CR line ending', `o\r\n1\r\n${ROOT_B64}\r\n`, 'malformed-checkpoint'],
    ['empty origin', `\n1\n${ROOT_B64}\n`, 'bad-origin'],
    ['leading space in origin', ` o\n1\n${ROOT_B64}\n`, 'bad-origin'],
    ['trailing space in origin', `o \n1\n${ROOT_B64}\n`, 'bad-origin'],
    ['leading zero', `o\n01\n${ROOT_B64}\n`, 'bad-size'],
    ['"00"', `o\n00\n${ROOT_B64}\n`, 'bad-size'],
    ['plus sign', `o\n+1\n${ROOT_B64}\n`, 'bad-size'],
    ['minus sign', `o\n-1\n${ROOT_B64}\n`, 'bad-size'],
    ['empty size', `o\n\n${ROOT_B64}\n`, 'bad-size'],
    ['hex size', `o\n0x10\n${ROOT_B64}\n`, 'bad-size'],
    ['size 2^53', `o\n9007199254740992\n${ROOT_B64}\n`, 'size-out-of-range'],
    ['size 2^64-1', `o\n18446744073709551615\n${ROOT_B64}\n`, 'size-out-of-range'],
    ['31-byte root', `o\n1\n${Buffer.alloc(31).toString('base64')}\n`, 'bad-root-hash'],
    ['33-byte root', `o\n1\n${Buffer.alloc(33).toString('base64')}\n`, 'bad-root-hash'],
    ['unpadded root', `o\n1\n${ROOT_B64.replace(/=+$/, '')}\n`, 'bad-root-hash'],
    ['URL-safe alphabet root', `o\n1\n${Buffer.alloc(32, 0xfb).toString('base64url')}=\n`, 'bad-root-hash'],
    ['root with non-zero pad bits (same bytes, second spelling)', `o\n1\n${withPadBit(ROOT_B64)}\n`, 'bad-root-hash'],
    ['empty extension', `o\n1\n${ROOT_B64}\n\n`, 'bad-extension'],
  ];
  test.each(bad)('rejects %s', (_label, text, expected) => {
    expect(code(parseCheckpoint(text))).toBe(expected);
  });

  test('accepts the largest safe size and size 0', () => {
    expect(code(parseCheckpoint(`o\n9007199254740991\n${ROOT_B64}\n`))).toBe('ok');
    expect(code(parseCheckpoint(`o\n0\n${ROOT_B64}\n`))).toBe('ok');
  });

  test('format refuses what parse would refuse', () => {
    for (const f of [
      () => formatCheckpoint({ origin: 'a\nb', size: 1, root: ROOT }),
      () => formatCheckpoint({ origin: ' a', size: 1, root: ROOT }),
      () => formatCheckpoint({ origin: '', size: 1, root: ROOT }),
      () => formatCheckpoint({ origin: 'o', size: -1, root: ROOT }),
      () => formatCheckpoint({ origin: 'o', size: 1.5, root: ROOT }),
      () => formatCheckpoint({ origin: 'o', size: 2 ** 53, root: ROOT }),
      () => formatCheckpoint({ origin: 'o', size: 1, root: new Uint8Array(31) }),
      () => formatCheckpoint({ origin: 'o', size: 1, root: ROOT, extensions: [''] }),
      () => formatCheckpoint({ origin: 'o', size: 1, root: ROOT, extensions: ['a\nb'] }),
    ]) {
      expect(f).toThrow(TallyError);
    }
  });

  test('codes are closed and stable', () => {
    expect(CHECKPOINT_CODES).toEqual(['malformed-checkpoint', 'bad-origin', 'bad-size', 'size-out-of-range', 'bad-root-hash', 'bad-extension']);
  });

  const lineArb = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).map((s) => s.replace(/[\u0000-\u001f]/g, 'x'));
  const originArb = lineArb.filter((s) => isValidOrigin(s));
  const inputArb = fc.record({
    origin: originArb,
    size: fc.maxSafeNat(),
    root: fc.uint8Array({ minLength: 32, maxLength: 32 }),
    extensions: fc.array(lineArb, { maxLength: 3 }),
  });

  test('parse ∘ format is the identity, and format ∘ parse gives back the text (seed 0xc4ec)', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const text = formatCheckpoint(input);
        const r = parseCheckpoint(text);
        if (!r.ok) return false;
        return (
          formatCheckpoint(r.checkpoint) === text &&
          r.checkpoint.origin === input.origin &&
          r.checkpoint.size === input.size &&
          Buffer.from(r.checkpoint.root).equals(Buffer.from(input.root)) &&
          JSON.stringify(r.checkpoint.extensions) === JSON.stringify(input.extensions)
        );
      }),
      { seed: 0xc4ec, numRuns: 300 },
    );
  });
});
