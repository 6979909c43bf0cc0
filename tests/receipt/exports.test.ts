import { expect, test } from 'vitest';
import * as checkpoint from '../../src/receipt/checkpoint/index.js';
import * as keys from '../../src/receipt/keys/index.js';
import * as note from '../../src/receipt/note/index.js';

// The public surface of each receipt sub-layer; a change here is an API change.
test('receipt/note exports', () => {
  expect(Object.keys(note).sort()).toEqual([
    'ALG_ED25519',
    'MAX_SIGNATURES',
    'OPEN_NOTE_CODES',
    'PRIVATE_KEY_PREFIX',
    'SIGNATURE_LINE_PREFIX',
    'VERIFIER_KEY_CODES',
    'assertNoteText',
    'decodeBase64Strict',
    'decodeVerifierKey',
    'encodeBase64',
    'formatKeyId',
    'formatVerifierKey',
    'isValidKeyName',
    'keyId',
    'openNote',
    'openPinnedNote',
    'parseVerifierKey',
    'signNote',
  ]);
});

test('receipt/keys exports', () => {
  expect(Object.keys(keys).sort()).toEqual([
    'KEY_DIR_MODE',
    'KEY_FILE_MODE',
    'engineKeyFromPrivateKey',
    'formatPrivateKey',
    'generateEngineKey',
    'loadEngineKeyFile',
    'loadOrCreateEngineKey',
    'parsePrivateKey',
  ]);
});

test('receipt/checkpoint exports', () => {
  expect(Object.keys(checkpoint).sort()).toEqual([
    'CHECKPOINT_CODES',
    'MAX_PROOF_HASHES',
    'PROOF_HASH_BYTES',
    'ROOT_HASH_BYTES',
    'TLOG_PROOF_CODES',
    'TLOG_PROOF_HEADER',
    'checkpointOrigin',
    'formatCheckpoint',
    'formatTlogProof',
    'isValidOrigin',
    'parseCheckpoint',
    'parseTlogProof',
    'verifyTlogProof',
  ]);
});
