/**
 * Cosignatures (C2SP tlog-cosignature/v1, Ed25519 type 0x04): the spec's
 * examples as data, and an independent second implementation written from the
 * spec with nothing but node:crypto, compared byte for byte (Ed25519 is
 * deterministic, so two honest implementations print the same line).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign as edSign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { formatCheckpoint, generateEngineKey, openNote, openSessionCheckpoint, parseVerifierKey, signNote } from '../../src/receipt/index.js';
import {
  addSignatureLines,
  cosignatureLine,
  cosignedMessage,
  cosignerKeyFrom,
  formatCosignerVerifierKey,
  parseCosignerVerifierKey,
  splitSignatureLines,
  verifyCosignatures,
} from '../../src/witness/index.js';

// --- Test data from the C2SP specification https://c2sp.org/tlog-cosignature
// (C2SP/C2SP, tlog-cosignature.md; © the C2SP authors, used here as test data
// under the C2SP repository's licence). The spec's example cosignature line
// and its example signed message with the same timestamp.
const SPEC_BODY = 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';
const SPEC_LOG_LINE = '— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n';
const SPEC_COSIG_LINE = '— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n';
const SPEC_MESSAGE = 'cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';
// The example witness answers of https://c2sp.org/tlog-witness (add-checkpoint, 200).
const SPEC_WITNESS_ANSWER =
  '— witness.example/w1 CMp+6LWBU0anHGH5aNDTJkH/gj79sG+T6+iP2ThYN5krrDJbR1HDnucjL39QsZTSvVjyQLrdk3DXDqI5G2HgLatVs0pWh6Up69HVOw==\n' +
  '— witness.example/w1 I7rEps0pvK2UqkS2gSpVUDhrhVtQV9lgF6pRrWAvjJHjyWpW7VcE3SiOlVlbQNt64vWhO+DlkL0+UfzuOBMh9ChdMkP1vi/lCAsmlw==\n' +
  '— witness.example/w2 AWui8Sk55XjYLOijihBjhqEH6nS1ndDymE0a+6idX7pLcnoB+dhnz0854aLZgrrKbYKA7nC3HNJhm/kWl7oJlqU3rXXvpysAdyP3wQ==\n';

// --- An independent implementation, from the spec text only (node:crypto).
const naive = {
  keyId(name: string, pub: Uint8Array): Buffer {
    return createHash('sha256').update(Buffer.concat([Buffer.from(name, 'utf8'), Buffer.from([0x0a, 0x04]), pub])).digest().subarray(0, 4);
  },
  vkey(name: string, pub: Uint8Array): string {
    return `${name}+${naive.keyId(name, pub).toString('hex')}+${Buffer.concat([Buffer.from([0x04]), pub]).toString('base64')}`;
  },
  line(name: string, priv: KeyObject, pub: Uint8Array, time: number, body: string): string {
    const msg = Buffer.from(`cosignature/v1\ntime ${time}\n${body}`, 'utf8');
    const ts = Buffer.alloc(8);
    ts.writeBigUInt64BE(BigInt(time));
    const sig = edSign(null, msg, priv);
    return `\u2014 ${name} ${Buffer.concat([naive.keyId(name, pub), ts, sig]).toString('base64')}\n`;
  },
};

function rawPub(k: KeyObject): Uint8Array {
  return new Uint8Array((k.type === 'private' ? createPublicKey(k) : k).export({ format: 'der', type: 'spki' }).subarray(-32));
}

function fixture() {
  const log = generateEngineKey('tally.example/acme');
  const text = formatCheckpoint({ origin: `tally.example/acme/${'ab'.repeat(32)}`, size: 5, root: new Uint8Array(32).fill(7) });
  const signed = signNote(text, [log]);
  const witness = cosignerKeyFrom(generateEngineKey('witness.example/w1'));
  return { log, text, signed, witness };
}

describe('cosignature bytes against the C2SP examples', () => {
  it('the example line carries key ID, the example timestamp and a 64-byte signature', () => {
    const lines = splitSignatureLines(SPEC_COSIG_LINE)!;
    expect(lines).toEqual([SPEC_COSIG_LINE]);
    const raw = Buffer.from(SPEC_COSIG_LINE.split(' ')[2]!.trim(), 'base64');
    expect(raw.length).toBe(4 + 8 + 64);
    expect(raw.readBigUInt64BE(4)).toBe(1679315147n);
    // The spec's example signed message for that timestamp is exactly what Tally signs.
    expect(Buffer.from(cosignedMessage(1679315147, new TextEncoder().encode(SPEC_BODY))).toString('utf8')).toBe(SPEC_MESSAGE);
  });

  it('the example witness answer splits into three signature lines; a stray text line is refused', () => {
    expect(splitSignatureLines(SPEC_WITNESS_ANSWER)).toHaveLength(3);
    expect(splitSignatureLines(`${SPEC_WITNESS_ANSWER}hello\n`)).toBeUndefined();
    expect(splitSignatureLines(SPEC_WITNESS_ANSWER.slice(0, -1))).toBeUndefined();
  });

  it('a verifier pinned to other keys ignores the example cosignature (unknown lines stay ignored)', () => {
    const other = cosignerKeyFrom(generateEngineKey('witness.example.com/w2'));
    const note = `${SPEC_BODY}\n${SPEC_LOG_LINE}${SPEC_COSIG_LINE}`;
    const r = openNote(note, [other.verifier]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.code).toBe('no-pinned-signature');
  });
});

describe('cosignatures against an independent implementation', () => {
  it.each([0, 1, 1679315147, 2 ** 32, Number.MAX_SAFE_INTEGER])('same key ID, vkey and line at time %s', (time) => {
    const { text } = fixture();
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const pub = rawPub(publicKey);
    const key = cosignerKeyFrom({ name: 'witness.example/w1', privateKey });
    expect(key.verifierKey).toBe(naive.vkey('witness.example/w1', pub));
    expect(formatCosignerVerifierKey('witness.example/w1', pub)).toBe(key.verifierKey);
    expect(cosignatureLine(text, key, time)).toBe(naive.line('witness.example/w1', privateKey, pub, time, text));
  });

  it('a line made by the independent implementation verifies, with its time', () => {
    const { log, text, signed } = fixture();
    const seed = Buffer.alloc(32, 9);
    const priv = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
    const pub = rawPub(priv);
    const v = parseCosignerVerifierKey(naive.vkey('w.example', pub));
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    const note = addSignatureLines(signed, [naive.line('w.example', priv, pub, 1700000000, text)]);
    const r = verifyCosignatures(note, [log], [v.verifier]);
    expect(r).toMatchObject({ ok: true, cosignatures: [{ name: 'w.example', time: 1700000000 }] });
  });
});

describe('creating, rendering and verifying', () => {
  it('a cosigned checkpoint still opens with the engine key alone (cosignatures are unknown lines to it)', () => {
    const { log, text, signed, witness } = fixture();
    const note = addSignatureLines(signed, [cosignatureLine(text, witness, 1700000000)]);
    expect(note.startsWith(signed)).toBe(true);
    const r = openSessionCheckpoint(note, [log.verifierKey]);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.checkpoint.unverified.map((s) => s.name)).toEqual(['witness.example/w1']);
  });

  it('adding the same line twice keeps one copy; a non-line is refused', () => {
    const { text, signed, witness } = fixture();
    const line = cosignatureLine(text, witness, 5);
    expect(addSignatureLines(addSignatureLines(signed, [line]), [line])).toBe(addSignatureLines(signed, [line]));
    expect(() => addSignatureLines(signed, ['hello\n'])).toThrow(/signature line/);
    expect(() => addSignatureLines(signed, [`${line}${line}`])).toThrow(/signature line/);
  });

  it('a cosignature over another body, another time or flipped bits is refused by a pinned verifier', () => {
    const { log, text, signed, witness } = fixture();
    const line = cosignatureLine(text, witness, 1700000000);
    const raw = Buffer.from(line.split(' ')[2]!.trim(), 'base64');
    for (const i of [4, 11, 12, 75]) {
      const bad = Buffer.from(raw);
      bad[i]! ^= 1;
      const note = addSignatureLines(signed, [`— witness.example/w1 ${bad.toString('base64')}\n`]);
      const r = verifyCosignatures(note, [log], [witness.verifier]);
      expect(r, `bit flipped in byte ${i}`).toMatchObject({ ok: false, code: 'bad-signature' });
    }
    const other = formatCheckpoint({ origin: `tally.example/acme/${'ab'.repeat(32)}`, size: 6, root: new Uint8Array(32).fill(7) });
    const moved = addSignatureLines(signNote(other, [log]), [line]);
    expect(verifyCosignatures(moved, [log], [witness.verifier])).toMatchObject({ ok: false, code: 'bad-signature' });
  });

  it('a timestamp above 2^53 - 1 is refused even with a valid signature', () => {
    const { log, text, signed } = fixture();
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const pub = rawPub(publicKey);
    const time = 2 ** 53; // naive implementation signs it exactly
    const note = addSignatureLines(signed, [naive.line('w', privateKey, pub, time, text)]);
    const v = parseCosignerVerifierKey(naive.vkey('w', pub));
    expect(v.ok && verifyCosignatures(note, [log], [v.verifier])).toMatchObject({ ok: false, code: 'bad-signature' });
    expect(() => cosignerKeyFrom({ name: 'w', privateKey }).cosign(new Uint8Array(1), time)).toThrow(/2\^53/);
  });

  it('keys of the two types never stand in for each other', () => {
    const { witness, log } = fixture();
    expect(parseVerifierKey(witness.verifierKey)).toMatchObject({ ok: false, code: 'unknown-key-algorithm' });
    expect(parseCosignerVerifierKey(log.verifierKey)).toMatchObject({ ok: false, code: 'not-a-cosigner-key' });
    expect(parseCosignerVerifierKey(witness.verifierKey.replace(/\+[0-9a-f]{8}\+/, '+00000000+'))).toMatchObject({ ok: false, code: 'key-id-mismatch' });
    expect(parseCosignerVerifierKey('no-plus')).toMatchObject({ ok: false, code: 'malformed-verifier-key' });
    // The engine key's own signature line does not count as a cosignature of the same seed.
    const sameSeed = cosignerKeyFrom(log);
    expect(sameSeed.keyId).not.toBe(log.keyId);
  });
});
