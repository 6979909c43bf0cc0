/**
 * openSessionCheckpoint remembers openings only for deterministic (parsed
 * Ed25519) verifiers: every answer equals the uncached opening's, across valid,
 * tampered, wrong-key, wrong-session and multi-key inputs, in any order, and a
 * caller-built verifier is asked every time.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCheckpoint, generateEngineKey, openSessionCheckpoint, parseVerifierKey, signNote, type NoteVerifier } from '../../src/receipt/index.js';
import { openUncached } from '../../src/receipt/session/open-checkpoint.js';

const A = generateEngineKey('tally.example/a');
const B = generateEngineKey('tally.example/b');
const sid = (n: number): string => n.toString(16).padStart(64, '0');

function checkpoint(key: typeof A, session: number, size: number): string {
  return signNote(formatCheckpoint({ origin: `${key.name}/${sid(session)}`, size, root: new Uint8Array(32).fill(size & 0xff) }), [key]);
}

/** Flips one character of the signature line (a bad signature by a pinned key). */
function tamper(text: string): string {
  const i = text.length - 5;
  return text.slice(0, i) + (text[i] === 'A' ? 'B' : 'A') + text.slice(i + 1);
}

describe('openSessionCheckpoint memo', () => {
  it('answers exactly as the uncached opening, whatever came before (seed 0x15)', () => {
    const texts = [checkpoint(A, 1, 3), checkpoint(A, 2, 5), checkpoint(B, 1, 3), tamper(checkpoint(A, 1, 3)), tamper(checkpoint(B, 2, 7)), 'not a note'];
    const parsedA = parseVerifierKey(A.verifierKey);
    const parsedB = parseVerifierKey(B.verifierKey);
    if (!parsedA.ok || !parsedB.ok) throw new Error('keys');
    const pins: (NoteVerifier | string)[][] = [[parsedA.verifier], [parsedB.verifier], [A.verifierKey], [B.verifierKey], [parsedA.verifier, parsedB.verifier], [B.verifierKey, A.verifierKey], ['bad+00000000+AA==']];
    const sessions = [undefined, sid(1), sid(2)];
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(texts.length - 1), fc.nat(pins.length - 1), fc.nat(sessions.length - 1)), { maxLength: 40 }), (calls) => {
        for (const [t, p, s] of calls) {
          const session = sessions[s];
          const options = session === undefined ? {} : { sessionId: session };
          const want = openUncached(texts[t]!, pins[p]!);
          const expected = !want.ok || session === undefined || want.checkpoint.sessionId === session ? want : { ok: false, stage: 'origin', code: 'wrong-session', message: `checkpoint is for session ${want.checkpoint.sessionId}, not ${session}` };
          expect(openSessionCheckpoint(texts[t]!, pins[p]!, options)).toEqual(expected);
        }
      }),
      { seed: 0x15, numRuns: 60 },
    );
  });

  it('never remembers a caller-built verifier: it is asked on every opening', () => {
    let asked = 0;
    const own: NoteVerifier = { name: A.name, keyId: A.keyId, verify: (m, s) => (asked++, A.verify(m, s)) };
    const text = checkpoint(A, 9, 4);
    for (let i = 0; i < 3; i++) expect(openSessionCheckpoint(text, [own]).ok).toBe(true);
    expect(asked).toBe(3);
  });

  it('a remembered valid opening does not vouch for a tampered text or another key', () => {
    const text = checkpoint(A, 4, 2);
    expect(openSessionCheckpoint(text, [A.verifierKey]).ok).toBe(true);
    expect(openSessionCheckpoint(tamper(text), [A.verifierKey]).ok).toBe(false);
    expect(openSessionCheckpoint(text, [B.verifierKey]).ok).toBe(false);
    expect(openSessionCheckpoint(text, [A.verifierKey]).ok).toBe(true);
  });
});
