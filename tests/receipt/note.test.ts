import { describe, expect, test } from 'vitest';
import { generateEngineKey } from '../../src/receipt/keys/index.js';
import { OPEN_NOTE_CODES, openNote, parseVerifierKey, signNote, type NoteVerifier, type OpenNoteResult } from '../../src/receipt/note/index.js';
import { TallyError } from '../../src/protocol/errors.js';
import { goNote, insertAtByte, utf8 } from './vectors.js';

const { text, peterSig, enochSig } = goNote;
const peterKey = goNote.peter.verifierKey;
const enochKey = goNote.enoch.verifierKey;
const peter = { name: 'PeterNeumann', keyId: 0xc74f20a3, base64: peterSig.slice(15, -1) };
const enoch = { name: 'EnochRoot', keyId: 0xaf0cfe78, base64: enochSig.slice(12, -1) };

function code(r: OpenNoteResult): string {
  return r.ok ? 'ok' : r.code;
}

describe('openNote — Go TestOpen, case by case', () => {
  test('one pinned signature verified, the other kept as unverified', () => {
    expect(openNote(`${text}\n${peterSig}${enochSig}`, [peterKey])).toEqual({ ok: true, text, verified: [peter], unverified: [enoch] });
  });

  test('both pinned: both verified, in note order', () => {
    expect(openNote(`${text}\n${peterSig}${enochSig}`, [peterKey, enochKey])).toEqual({ ok: true, text, verified: [peter, enoch], unverified: [] });
  });

  test('nothing pinned: no-pinned-signature, naming the signers', () => {
    const r = openNote(`${text}\n${peterSig}${enochSig}`, []);
    expect(code(r)).toBe('no-pinned-signature');
    expect(r.ok ? '' : r.message).toContain('PeterNeumann+c74f20a3');
    expect(r.ok ? '' : r.message).toContain('EnochRoot+af0cfe78');
  });

  test('a duplicated pinned verifier is ambiguous only when a signature uses it', () => {
    expect(code(openNote(`${text}\n${enochSig}`, [enochKey, peterKey, enochKey]))).toBe('ambiguous-verifier');
    expect(code(openNote(`${text}\n${peterSig}`, [enochKey, peterKey, enochKey]))).toBe('ok');
  });

  test('101 signature lines are too many, pinned or not; 100 are accepted', () => {
    expect(code(openNote(`${text}\n${peterSig.repeat(101)}`, [peterKey]))).toBe('too-many-signatures');
    expect(code(openNote(`${text}\n${peterSig.repeat(101)}`, []))).toBe('too-many-signatures');
    const r = openNote(`${text}\n${peterSig.repeat(100)}`, [peterKey]);
    expect(r.ok && r.verified).toEqual([peter]);
  });

  test('a pinned signature that does not verify is an error (Go inserts ABCD at byte 60)', () => {
    const r = openNote(insertAtByte(`${text}\n${peterSig}`, Buffer.byteLength(`${text}\n`) + 60, 'ABCD'), [peterKey]);
    expect(code(r)).toBe('bad-signature');
    expect(r.ok ? '' : r.message).toBe('invalid signature for key PeterNeumann+c74f20a3');
  });

  test('repeated verified and unverified signatures are recorded once each', () => {
    const enochBytes = Buffer.from(enochSig, 'utf8');
    const enochABCD = Buffer.concat([enochBytes.subarray(0, 60), Buffer.from('ABCD'), enochBytes.subarray(60)]).toString('utf8');
    const r = openNote(`${text}\n${peterSig}${peterSig}${enochSig}${enochSig}${enochABCD}`, [peterKey]);
    expect(r.ok && r.verified).toEqual([peter]);
    expect(r.ok && r.unverified).toEqual([enoch, { name: 'EnochRoot', keyId: 0xaf0cfe78, base64: enochABCD.slice(12, -1) }]);
  });

  const badMessages: [string, string | Uint8Array][] = [
    ['text only', text],
    ['text and blank line, no signature', `${text}\n`],
    ['signature line without final newline', `${text}\n${peterSig.slice(0, -1)}`],
    ['control character 0x01', `\u0001${text}\n${peterSig}`],
    ['invalid UTF-8 byte 0xff', new Uint8Array([0xff, ...utf8(`${text}\n${peterSig}`)])],
    ['name with a space, no newline', `${text}\n\u2014 Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=`],
    ['a non-signature line after the signatures', `${text}\n${peterSig}Unexpected line.\n`],
  ];
  test.each(badMessages)('malformed-note: %s', (_label, msg) => {
    expect(code(openNote(msg, [peterKey]))).toBe('malformed-note');
  });
});

describe('openNote — mutations of a signed note', () => {
  const signed = `${text}\n${peterSig}`;

  test('the unmutated note verifies (control)', () => {
    expect(code(openNote(signed, [peterKey]))).toBe('ok');
  });

  test('one byte of the text changed: bad-signature', () => {
    expect(code(openNote(signed.replace('cryptography', 'cryptographY'), [peterKey]))).toBe('bad-signature');
  });

  test('one bit of the signature changed: bad-signature', () => {
    const raw = Buffer.from(peter.base64, 'base64');
    raw[20] = raw[20]! ^ 1;
    expect(code(openNote(`${text}\n\u2014 PeterNeumann ${raw.toString('base64')}\n`, [peterKey]))).toBe('bad-signature');
  });

  test('wrong key ID: the line is ignored (unverified), so no pinned signature', () => {
    const raw = Buffer.from(peter.base64, 'base64');
    raw[3] = raw[3]! ^ 1;
    const r = openNote(`${text}\n\u2014 PeterNeumann ${raw.toString('base64')}\n`, [peterKey]);
    expect(code(r)).toBe('no-pinned-signature');
  });

  test('wrong name: the line is ignored, so no pinned signature', () => {
    expect(code(openNote(signed.replace('PeterNeumann', 'PeterNeuman'), [peterKey]))).toBe('no-pinned-signature');
  });

  test('an extra signature from an unknown key still verifies, and is kept as unverified', () => {
    const stranger = generateEngineKey('stranger.example');
    const extra = signNote(text, [stranger]).slice(text.length + 1);
    const r = openNote(signed + extra, [peterKey]);
    expect(r.ok && [r.verified.length, r.unverified.map((s) => s.name)]).toEqual([1, ['stranger.example']]);
  });

  test('missing final newline: malformed-note', () => {
    expect(code(openNote(signed.slice(0, -1), [peterKey]))).toBe('malformed-note');
  });

  test('signature line moved before the blank line: malformed-note (nothing after the blank line)', () => {
    expect(code(openNote(`${text}${peterSig}\n`, [peterKey]))).toBe('malformed-note');
  });

  test('a signature line before the blank separator is note text, so it changes the signed text', () => {
    const r = openNote(`${text}${peterSig}\n${peterSig}`, [peterKey]);
    expect(code(r)).toBe('bad-signature');
  });

  test('non-canonical base64 in a signature is malformed (Go would accept it)', () => {
    // "AM=" -> "AN=": only the unused low bits change, same bytes; rejected as a second spelling.
    expect(code(openNote(signed.replace('JnAM=', 'JnAN='), [peterKey]))).toBe('malformed-note');
  });

  test('signature with fewer than 5 bytes is malformed', () => {
    expect(code(openNote(`${text}\n\u2014 PeterNeumann x08gow==\n`, [peterKey]))).toBe('malformed-note');
  });

  test('bytes and string input give the same answer; a leading BOM is kept as text (and breaks the signature)', () => {
    expect(openNote(utf8(signed), [peterKey])).toEqual(openNote(signed, [peterKey]));
    expect(code(openNote(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(signed)]), [peterKey]))).toBe('bad-signature');
  });

  test('a lone surrogate in string input is malformed (it has no UTF-8 form)', () => {
    expect(code(openNote(`\uD800${signed}`, [peterKey]))).toBe('malformed-note');
  });
});

describe('openNote — verifiers', () => {
  test('a malformed verifier key string is reported, not thrown', () => {
    const r = openNote(`${text}\n${peterSig}`, ['PeterNeumann+c74f20a3']);
    expect(code(r)).toBe('malformed-verifier-key');
  });

  test('a private key passed as a verifier is refused without echoing the secret', () => {
    const r = openNote(`${text}\n${peterSig}`, [goNote.peter.privateKey]);
    expect(code(r)).toBe('malformed-verifier-key');
    expect(r.ok ? '' : r.message).not.toContain('AYEKFALV');
  });

  test('a key split into more than three parts: the third part keeps its "+" and must be valid base64', () => {
    expect(code(openNote(`${text}\n${peterSig}`, [`${peterKey}+extra`]))).toBe('malformed-verifier-key');
    expect(parseVerifierKey(`Peter+Neumann+c74f20a3+${peterKey.split('+')[2]!}`).ok).toBe(false);
  });

  test('a parsed verifier and its string form behave the same', () => {
    const parsed = parseVerifierKey(peterKey);
    if (!parsed.ok) throw new Error('vector must parse');
    const v: NoteVerifier = parsed.verifier;
    expect(openNote(`${text}\n${peterSig}`, [v])).toEqual(openNote(`${text}\n${peterSig}`, [peterKey]));
  });

  test('code tuple is closed and stable', () => {
    expect(OPEN_NOTE_CODES).toEqual(['malformed-note', 'too-many-signatures', 'malformed-verifier-key', 'ambiguous-verifier', 'bad-signature', 'no-pinned-signature']);
  });
});

describe('signNote', () => {
  test('several keys: one line each, in order, each verifiable alone and all together', () => {
    const keys = [generateEngineKey('a.example/one'), generateEngineKey('b.example/two'), generateEngineKey('c.example/three')];
    const note = signNote('multi\n\nsigned\n', keys);
    const lines = note.split('\n\n').at(-1)!.split('\n').filter(Boolean);
    expect(lines.map((l) => l.split(' ')[1])).toEqual(['a.example/one', 'b.example/two', 'c.example/three']);
    for (const k of keys) {
      const r = openNote(note, [k.verifierKey]);
      expect(r.ok && [r.text, r.verified.length, r.unverified.length]).toEqual(['multi\n\nsigned\n', 1, 2]);
    }
    const all = openNote(note, keys);
    expect(all.ok && all.verified.map((s) => s.name)).toEqual(keys.map((k) => k.name));
  });

  test('round trip with a generated key; wrong key of the same name is ignored, not an error', () => {
    const key = generateEngineKey('tally.example/acme');
    const twin = generateEngineKey('tally.example/acme');
    const note = signNote('hello\n', [key]);
    expect(code(openNote(note, [key.verifierKey]))).toBe('ok');
    expect(code(openNote(note, [twin.verifierKey]))).toBe(twin.keyId === key.keyId ? 'bad-signature' : 'no-pinned-signature');
  });

  const misuse: [string, () => unknown, string][] = [
    ['text without final newline', () => signNote('abc', [generateEngineKey('k')]), 'TALLY_NOTE_TEXT_INVALID'],
    ['empty text', () => signNote('', [generateEngineKey('k')]), 'TALLY_NOTE_TEXT_INVALID'],
    ['control character', () => signNote('a\tb\n', [generateEngineKey('k')]), 'TALLY_NOTE_TEXT_INVALID'],
    ['lone surrogate', () => signNote('\uDC00\n', [generateEngineKey('k')]), 'TALLY_NOTE_TEXT_INVALID'],
    ['no signers', () => signNote('a\n', []), 'TALLY_NOTE_SIGNER_INVALID'],
    ['duplicate signer', () => { const k = generateEngineKey('k'); return signNote('a\n', [k, k]); }, 'TALLY_NOTE_SIGNER_INVALID'],
    ['bad signer name', () => signNote('a\n', [{ name: 'bad name', keyId: 1, sign: () => new Uint8Array(64) }]), 'TALLY_NOTE_SIGNER_INVALID'],
    ['bad key ID', () => signNote('a\n', [{ name: 'n', keyId: 2 ** 32, sign: () => new Uint8Array(64) }]), 'TALLY_NOTE_SIGNER_INVALID'],
    ['empty signature', () => signNote('a\n', [{ name: 'n', keyId: 1, sign: () => new Uint8Array(0) }]), 'TALLY_NOTE_SIGNER_INVALID'],
  ];
  test.each(misuse)('throws on misuse: %s', (_label, fn, expected) => {
    expect(fn).toThrow(TallyError);
    try {
      fn();
    } catch (e) {
      expect((e as TallyError).code).toBe(expected);
    }
  });
});
