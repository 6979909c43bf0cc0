import { createPrivateKey, type KeyObject } from 'node:crypto';
import { decodeBase64Strict, encodeBase64 } from '../note/base64.js';
import { ed25519PrivateKeyObject, ed25519RawPublicKey, ed25519RawSeed } from '../note/ed25519.js';
import { ALG_ED25519, ED25519_KEY_BYTES, PRIVATE_KEY_PREFIX, encodeEd25519Key, formatKeyId, keyIdOfEncodedKey } from '../note/layout.js';
import { isValidKeyName } from '../note/name.js';
import { chop } from '../note/verifierKey.js';
import { engineKeyFromPrivateKey, type EngineKey } from './engineKey.js';
import { TallyError } from '../../protocol/errors.js';

const PEM_RE = /^-----BEGIN PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PRIVATE KEY-----$/;

function malformed(shortMessage: string): TallyError {
  // Never put key material in the error.
  return new TallyError('TALLY_KEY_MALFORMED', shortMessage);
}

function fromNoteString(s: string, expectedName: string | undefined): EngineKey {
  // Go's NewSigner: PRIVATE + KEY + name + hash16 + key64 (the base64 may hold "+").
  const [priv1, r1] = chop(s, '+');
  const [priv2, r2] = chop(r1, '+');
  const [name, r3] = chop(r2, '+');
  const [hash16, key64] = chop(r3, '+');
  const key = decodeBase64Strict(key64);
  if (priv1 !== 'PRIVATE' || priv2 !== 'KEY' || !/^[0-9a-fA-F]{8}$/.test(hash16) || key === undefined || key.length === 0 || !isValidKeyName(name)) {
    throw malformed('Private key must be PRIVATE+KEY+<name>+<8 hex key ID>+<base64 key>.');
  }
  if (key[0] !== ALG_ED25519) throw new TallyError('TALLY_KEY_UNKNOWN_ALGORITHM', 'Private key is not an Ed25519 (0x01) key.');
  const seed = key.subarray(1);
  if (seed.length !== ED25519_KEY_BYTES) throw malformed(`Ed25519 private key must be ${ED25519_KEY_BYTES} bytes.`);
  const privateKey = ed25519PrivateKeyObject(seed);
  const id = keyIdOfEncodedKey(name, encodeEd25519Key(ed25519RawPublicKey(privateKey)));
  if (id !== Number.parseInt(hash16, 16)) {
    throw new TallyError('TALLY_KEY_ID_MISMATCH', 'Private key ID does not match the key.', { details: `says ${hash16}, computed ${formatKeyId(id)}` });
  }
  if (expectedName !== undefined && expectedName !== name) {
    throw new TallyError('TALLY_KEY_NAME_MISMATCH', 'Private key is for a different key name.', {
      details: `key is for ${JSON.stringify(name)}, expected ${JSON.stringify(expectedName)}`,
    });
  }
  return engineKeyFromPrivateKey(name, privateKey);
}

function fromPem(pem: string, name: string | undefined): EngineKey {
  if (name === undefined) throw new TallyError('TALLY_KEY_NAME_REQUIRED', 'A PEM private key carries no key name; pass one.');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: pem, format: 'pem' });
  } catch (cause) {
    throw new TallyError('TALLY_KEY_MALFORMED', 'PEM private key does not parse.', { cause });
  }
  return engineKeyFromPrivateKey(name, privateKey);
}

/**
 * Parses an operator-supplied engine key: either Go's signer key string
 * `PRIVATE+KEY+<name>+<keyid>+base64(0x01 ‖ seed32)` (split at the first four
 * `+`, key ID checked against the derived public key) or an unencrypted PKCS#8
 * PEM Ed25519 key (`-----BEGIN PRIVATE KEY-----`), which needs `name`.
 * Surrounding white space is ignored. Throws `TallyError` (`TALLY_KEY_MALFORMED`,
 * `TALLY_KEY_UNKNOWN_ALGORITHM`, `TALLY_KEY_ID_MISMATCH`, `TALLY_KEY_NAME_MISMATCH`,
 * `TALLY_KEY_NAME_REQUIRED`, `TALLY_NOTE_KEY_NAME_INVALID`); messages never contain key material.
 *
 * @example
 * parsePrivateKey('PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz').verifierKey
 * // 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'
 */
export function parsePrivateKey(text: string, name?: string): EngineKey {
  if (typeof text !== 'string') throw malformed('Private key must be a string.');
  const s = text.trim();
  if (s.startsWith(PRIVATE_KEY_PREFIX)) return fromNoteString(s, name);
  if (PEM_RE.test(s)) return fromPem(s, name);
  throw malformed('Private key must be PRIVATE+KEY+… or a PKCS#8 PEM Ed25519 key.');
}

/**
 * Go's signer key string for `key`: `PRIVATE+KEY+<name>+<keyid>+base64(0x01 ‖ seed)`.
 * SECRET: anyone holding it can sign as the engine.
 */
export function formatPrivateKey(key: EngineKey): string {
  const encoded = encodeEd25519Key(ed25519RawSeed(key.privateKey));
  return `${PRIVATE_KEY_PREFIX}${key.name}+${formatKeyId(key.keyId)}+${encodeBase64(encoded)}`;
}
