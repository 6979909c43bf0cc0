import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { formatPrivateKey, generateEngineKey, parsePrivateKey } from '../../src/receipt/keys/index.js';
import { VERIFIER_KEY_CODES, formatKeyId, formatVerifierKey, keyId, parseVerifierKey } from '../../src/receipt/note/index.js';
import { TallyError } from '../../src/protocol/errors.js';
import { goNote, goTree } from './vectors.js';

function throwsCode(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof TallyError) return e.code;
    throw e;
  }
  return 'no-throw';
}

describe('parseVerifierKey — Go TestNewVerifier', () => {
  const vkey = goNote.peter.verifierKey;

  test('every proper substring of the key is rejected', () => {
    const accepted: string[] = [];
    for (let i = 0; i <= vkey.length; i++) {
      for (let j = i + 1; j <= vkey.length; j++) {
        if (i === 0 && j === vkey.length) continue;
        if (parseVerifierKey(vkey.slice(i, j)).ok) accepted.push(vkey.slice(i, j));
      }
    }
    expect(accepted).toEqual([]);
  });

  test('every single-character increment is rejected', () => {
    const accepted: string[] = [];
    for (let i = 0; i < vkey.length; i++) {
      const m = vkey.slice(0, i) + String.fromCharCode(vkey.charCodeAt(i) + 1) + vkey.slice(i + 1);
      if (parseVerifierKey(m).ok) accepted.push(m);
    }
    expect(accepted).toEqual([]);
  });

  test('wrong key length with adjusted key ID: malformed; unknown algorithm with adjusted key ID: unknown-key-algorithm', () => {
    const a = parseVerifierKey(goNote.badVerifierKeys.wrongLengthAdjustedKeyId);
    const b = parseVerifierKey(goNote.badVerifierKeys.unknownAlgorithmAdjustedKeyId);
    expect([a.ok ? 'ok' : a.code, b.ok ? 'ok' : b.code]).toEqual(['malformed-verifier-key', 'unknown-key-algorithm']);
  });

  test('key ID mismatch has its own code', () => {
    const r = parseVerifierKey(vkey.replace('c74f20a3', 'c74f20a4'));
    expect(r.ok ? 'ok' : r.code).toBe('key-id-mismatch');
  });

  test('uppercase key ID hex is accepted like Go (strconv.ParseUint base 16) and printed back in lowercase', () => {
    const r = parseVerifierKey(vkey.replace('c74f20a3', 'C74F20A3'));
    expect(r.ok && r.verifier.verifierKey).toBe(vkey);
  });

  test('split into at most three parts: the base64 of sum.golang.org keeps its "+"', () => {
    const r = parseVerifierKey(goTree.verifierKey);
    expect(r.ok && r.verifier.verifierKey).toBe(goTree.verifierKey);
  });

  test('names with white space (incl. U+00A0, U+2028) or "+" are rejected; U+FEFF is not white space (as in Go)', () => {
    const pub = new Uint8Array(32).fill(9);
    for (const bad of ['a b', 'a\u00a0b', 'a\u2028b', 'a\u3000b', 'a\u0085b', '']) expect(throwsCode(() => formatVerifierKey(bad, pub))).toBe('TALLY_NOTE_KEY_NAME_INVALID');
    const ok = formatVerifierKey('a\ufeffb', pub);
    expect(parseVerifierKey(ok).ok).toBe(true);
  });

  test('codes are closed and stable', () => {
    expect(VERIFIER_KEY_CODES).toEqual(['malformed-verifier-key', 'unknown-key-algorithm', 'key-id-mismatch']);
  });
});

describe('keyId / formatVerifierKey', () => {
  test('keyId is SHA-256(name ‖ 0x0A ‖ 0x01 ‖ pub)[0:4] big-endian — checked against an independent computation', async () => {
    const { sha256 } = await import('@noble/hashes/sha2.js');
    const key = generateEngineKey('tally.example/acme');
    const pre = new Uint8Array([...new TextEncoder().encode('tally.example/acme'), 0x0a, 0x01, ...key.publicKey]);
    const d = sha256(pre);
    const expected = ((d[0]! << 24) | (d[1]! << 16) | (d[2]! << 8) | d[3]!) >>> 0;
    expect(keyId('tally.example/acme', key.publicKey)).toBe(expected);
    expect(key.keyId).toBe(expected);
    expect(key.verifierKey).toBe(`tally.example/acme+${formatKeyId(expected)}+${Buffer.from([1, ...key.publicKey]).toString('base64')}`);
  });

  test('a 31-byte public key is refused', () => {
    expect(throwsCode(() => formatVerifierKey('n', new Uint8Array(31)))).toBe('TALLY_NOTE_KEY_INVALID');
  });
});

describe('parsePrivateKey — Go TestNewSigner', () => {
  const skey = goNote.peter.privateKey;

  test('every proper substring of the signer key is rejected', () => {
    const accepted: string[] = [];
    for (let i = 0; i <= skey.length; i++) {
      for (let j = i + 1; j <= skey.length; j++) {
        if (i === 0 && j === skey.length) continue;
        try {
          parsePrivateKey(skey.slice(i, j));
          accepted.push(skey.slice(i, j));
        } catch (e) {
          if (!(e instanceof TallyError)) throw e;
        }
      }
    }
    expect(accepted).toEqual([]);
  });

  test('every single-character increment is rejected', () => {
    const accepted: string[] = [];
    for (let i = 0; i < skey.length; i++) {
      const m = skey.slice(0, i) + String.fromCharCode(skey.charCodeAt(i) + 1) + skey.slice(i + 1);
      if (throwsCode(() => parsePrivateKey(m)) === 'no-throw') accepted.push(m);
    }
    expect(accepted).toEqual([]);
  });

  test('format ∘ parse is the identity on Go\'s signer key; surrounding white space is ignored', () => {
    expect(formatPrivateKey(parsePrivateKey(skey))).toBe(skey);
    expect(formatPrivateKey(parsePrivateKey(`  ${skey}\n`))).toBe(skey);
  });

  test('specific refusals carry specific codes and never the key material', () => {
    expect(throwsCode(() => parsePrivateKey(skey.replace('c74f20a3', 'c74f20a4')))).toBe('TALLY_KEY_ID_MISMATCH');
    expect(throwsCode(() => parsePrivateKey(skey, 'EnochRoot'))).toBe('TALLY_KEY_NAME_MISMATCH');
    expect(throwsCode(() => parsePrivateKey(skey.replace('+AYEK', '+AoEK')))).toBe('TALLY_KEY_UNKNOWN_ALGORITHM');
    expect(throwsCode(() => parsePrivateKey('hello'))).toBe('TALLY_KEY_MALFORMED');
    try {
      parsePrivateKey(skey.replace('c74f20a3', 'c74f20a4'));
    } catch (e) {
      expect(String((e as Error).message)).not.toContain('AYEKFALV');
    }
  });

  test('PKCS#8 PEM is accepted with a name and refused without one; non-Ed25519 PEM is refused', () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const key = parsePrivateKey(pem, 'tally.example/pem');
    expect(key.name).toBe('tally.example/pem');
    expect(parsePrivateKey(formatPrivateKey(key)).verifierKey).toBe(key.verifierKey);
    expect(throwsCode(() => parsePrivateKey(pem))).toBe('TALLY_KEY_NAME_REQUIRED');
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(throwsCode(() => parsePrivateKey(ec, 'n'))).toBe('TALLY_KEY_UNKNOWN_ALGORITHM');
  });

  test('generated keys round-trip through the PRIVATE+KEY string, and the engine key verifies its own signatures', () => {
    const key = generateEngineKey('tally.example/acme');
    const again = parsePrivateKey(formatPrivateKey(key));
    expect(again.verifierKey).toBe(key.verifierKey);
    const msg = new TextEncoder().encode('m\n');
    const sig = again.sign(msg);
    expect(key.verify(msg, sig)).toBe(true);
    sig[5] = sig[5]! ^ 0x80;
    expect(key.verify(msg, sig)).toBe(false);
  });

  test('an engine key prints no secret through JSON or inspect', async () => {
    const { inspect } = await import('node:util');
    const key = generateEngineKey('tally.example/acme');
    const secret = formatPrivateKey(key).split('+').slice(4).join('+');
    expect(JSON.stringify(key)).not.toContain(secret);
    expect(inspect(key, { depth: 5 })).not.toContain(secret);
    expect(inspect(key, { depth: 5 })).not.toContain(Buffer.from(secret, 'base64').subarray(1).toString('hex'));
  });
});
