import { describe, expect, test } from 'vitest';
import { engineKeyFromPrivateKey, parsePrivateKey } from '../../src/receipt/keys/index.js';
import { ed25519PrivateKeyObject } from '../../src/receipt/note/ed25519.js';
import { formatKeyId, formatVerifierKey, keyId, openNote, parseVerifierKey, signNote } from '../../src/receipt/note/index.js';
import { parseCheckpoint, parseTlogProof, formatTlogProof } from '../../src/receipt/checkpoint/index.js';
import { fromHex, toHex } from '../../src/protocol/hex.js';
import { c2sp, goNote, goTree, rfc8032 } from './vectors.js';

describe('Go sumdb/note vectors', () => {
  test('PeterNeumann private key yields exactly Go\'s verifier key and key ID', () => {
    const key = parsePrivateKey(goNote.peter.privateKey);
    expect(key.name).toBe('PeterNeumann');
    expect(formatKeyId(key.keyId)).toBe(goNote.peter.keyIdHex);
    expect(key.verifierKey).toBe(goNote.peter.verifierKey);
    expect(formatVerifierKey(key.name, key.publicKey)).toBe(goNote.peter.verifierKey);
    expect(formatKeyId(keyId(key.name, key.publicKey))).toBe('c74f20a3');
  });

  test('signing Go\'s note text reproduces Go\'s signed note byte for byte (TestSign)', () => {
    const key = parsePrivateKey(goNote.peter.privateKey);
    expect(signNote(goNote.text, [key])).toBe(goNote.signedByPeter);
    expect(goNote.signedByPeter).toBe(`${goNote.text}\n${goNote.peterSig}`);
  });

  test('Go\'s signed note verifies with the PeterNeumann verifier key', () => {
    const r = openNote(goNote.signedByPeter, [goNote.peter.verifierKey]);
    expect(r).toEqual({
      ok: true,
      text: goNote.text,
      verified: [{ name: 'PeterNeumann', keyId: 0xc74f20a3, base64: goNote.peterSig.slice(15, -1) }],
      unverified: [],
    });
  });

  test('Go\'s EnochRoot signature verifies with the EnochRoot verifier key', () => {
    const r = openNote(`${goNote.text}\n${goNote.enochSig}`, [goNote.enoch.verifierKey]);
    expect(r.ok && r.verified.map((s) => formatKeyId(s.keyId))).toEqual([goNote.enoch.keyIdHex]);
  });

  test('both verifier keys parse, with the key IDs Go prints', () => {
    for (const k of [goNote.peter, goNote.enoch]) {
      const r = parseVerifierKey(k.verifierKey);
      expect(r.ok && [r.verifier.name, formatKeyId(r.verifier.keyId), r.verifier.verifierKey]).toEqual([k.name, k.keyIdHex, k.verifierKey]);
    }
  });
});

describe('sum.golang.org vectors', () => {
  test('the Go checksum database key (base64 containing "+") parses: split into at most three parts', () => {
    const r = parseVerifierKey(goTree.verifierKey);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.verifier.name).toBe('sum.golang.org');
    expect(formatKeyId(r.verifier.keyId)).toBe('033de0ae');
    expect(formatVerifierKey(r.verifier.name, r.verifier.publicKey)).toBe(goTree.verifierKey);
  });

  test('a real signed tree head verifies and its text is a strict checkpoint', () => {
    const r = openNote(goTree.signedTree, [goTree.verifierKey]);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const cp = parseCheckpoint(r.text);
    expect(cp.ok && [cp.checkpoint.origin, cp.checkpoint.size, Buffer.from(cp.checkpoint.root).toString('base64'), cp.checkpoint.extensions]).toEqual([
      goTree.origin,
      goTree.size,
      goTree.rootBase64,
      [],
    ]);
  });

  test('the tree head does not verify under the PeterNeumann key (no pinned signature)', () => {
    const r = openNote(goTree.signedTree, [goNote.peter.verifierKey]);
    expect(r.ok ? 'ok' : r.code).toBe('no-pinned-signature');
  });
});

describe('C2SP spec examples (keys unpublished: parse only)', () => {
  test('signed-note example is well formed; its text keeps the inner blank line', () => {
    const r = openNote(c2sp.signedNote.note, []);
    expect(r.ok ? 'ok' : r.code).toBe('no-pinned-signature');
    expect(r.ok ? '' : r.message).toContain(c2sp.signedNote.signerName);
    // With a key of the same name but a different key ID the signature is ignored, not an error.
    const other = engineKeyFromPrivateKey(c2sp.signedNote.signerName, ed25519PrivateKeyObject(new Uint8Array(32).fill(7)));
    const r2 = openNote(c2sp.signedNote.note + signNote(c2sp.signedNote.text, [other]).slice(c2sp.signedNote.text.length + 1), [other]);
    expect(r2.ok && [r2.text, r2.verified.length, r2.unverified.map((s) => s.name)]).toEqual([c2sp.signedNote.text, 1, [c2sp.signedNote.signerName]]);
  });

  test('tlog-checkpoint example parses strictly', () => {
    const r = openNote(c2sp.checkpoint.note, []);
    expect(r.ok ? 'ok' : r.code).toBe('no-pinned-signature');
    const text = c2sp.checkpoint.note.slice(0, c2sp.checkpoint.note.indexOf('\n\n') + 1);
    const cp = parseCheckpoint(text);
    expect(cp.ok && [cp.checkpoint.origin, cp.checkpoint.size, Buffer.from(cp.checkpoint.root).toString('base64')]).toEqual([
      c2sp.checkpoint.origin,
      c2sp.checkpoint.size,
      c2sp.checkpoint.rootBase64,
    ]);
  });

  test('tlog-proof example parses and re-formats to the same bytes; its elided signatures make the checkpoint malformed', () => {
    const r = parseTlogProof(c2sp.tlogProof.text);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.tlogProof.index).toBe(c2sp.tlogProof.index);
    expect(r.tlogProof.proof).toHaveLength(c2sp.tlogProof.proofLength);
    expect(r.tlogProof.extraData).toBeInstanceOf(Uint8Array);
    expect(formatTlogProof(r.tlogProof)).toBe(c2sp.tlogProof.text);
    const n = openNote(r.tlogProof.signedCheckpoint, []);
    expect(n.ok ? 'ok' : n.code).toBe('malformed-note');
  });
});

describe('RFC 8032 §7.1 Ed25519 vectors through the engine key', () => {
  test.each(rfc8032.vectors.map((v, i) => ({ ...v, n: i + 1 })))('TEST $n', (v) => {
    const key = engineKeyFromPrivateKey('rfc8032', ed25519PrivateKeyObject(fromHex(v.seed)));
    expect(toHex(key.publicKey)).toBe(v.publicKey);
    const msg = fromHex(v.message);
    expect(toHex(key.sign(msg))).toBe(v.signature);
    const ver = parseVerifierKey(key.verifierKey);
    expect(ver.ok).toBe(true);
    if (!ver.ok) return;
    const sig = fromHex(v.signature);
    expect(ver.verifier.verify(msg, sig)).toBe(true);
    sig[0] = sig[0]! ^ 1;
    expect(ver.verifier.verify(msg, sig)).toBe(false);
  });
});
