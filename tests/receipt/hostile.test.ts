import { describe, expect, test } from 'vitest';
import { parseCheckpoint, parseTlogProof, verifyTlogProof } from '../../src/receipt/checkpoint/index.js';
import { openNote, parseVerifierKey } from '../../src/receipt/note/index.js';
import { goNote } from './vectors.js';

// Values a caller might pass by mistake or malice. Parsers must answer with a
// result (ok: false), never throw.
const HOSTILE: unknown[] = [
  undefined,
  null,
  42,
  10n,
  10e9999,
  true,
  {},
  [],
  { length: 1e30 },
  new Proxy({}, {}),
  Symbol.iterator,
  () => 'x',
  new Uint16Array([0x2014, 0x20]),
];

describe('parsers reject hostile values with a result', () => {
  test.each(HOSTILE.map((v, i) => [i, v]))('value #%i', (_i, v) => {
    expect(parseVerifierKey(v as string).ok).toBe(false);
    expect(openNote(v as string, [goNote.peter.verifierKey]).ok).toBe(false);
    expect(parseCheckpoint(v as string).ok).toBe(false);
    expect(parseTlogProof(v as string).ok).toBe(false);
    expect(verifyTlogProof(v as string, { verifiers: [], leafHash: new Uint8Array(32) }).ok).toBe(false);
  });

  test('huge inputs are refused (1 MiB of signature lines: too many; how fast: npm run bench, section hostile)', () => {
    const r = openNote(`${goNote.text}\n${goNote.peterSig.repeat(10_000)}`, [goNote.peter.verifierKey]);
    expect(r.ok ? 'ok' : r.code).toBe('too-many-signatures');
  });
});
