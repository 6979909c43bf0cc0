import { sha256 } from '@noble/hashes/sha2.js';
import { describe, expect, test } from 'vitest';
import { checkpointOrigin, formatCheckpoint, formatTlogProof, verifyTlogProof, type VerifyTlogProofResult } from '../../src/receipt/checkpoint/index.js';
import { generateEngineKey } from '../../src/receipt/keys/index.js';
import { signNote } from '../../src/receipt/note/index.js';
import { inclusionProofFromLeafHashes, rfc6962Hasher, rootFromLeafHashes } from '../../src/protocol/merkle/index.js';

// Independent digest (noble) for building the tree; verifyTlogProof's default uses node:crypto.
const hasher = rfc6962Hasher(sha256);
const key = generateEngineKey('tally.example/acme');
const other = generateEngineKey('tally.example/other');
const origin = checkpointOrigin(key.name, 'ef'.repeat(32));
const leaves = Array.from({ length: 7 }, (_, i) => hasher.hashLeaf(new TextEncoder().encode(`entry ${i}`)));
const root = rootFromLeafHashes(hasher, leaves);
const signedCheckpoint = signNote(formatCheckpoint({ origin, size: leaves.length, root }), [key]);

function proofFor(index: number, cp = signedCheckpoint, extraData?: Uint8Array): string {
  const proof = inclusionProofFromLeafHashes(hasher, leaves, index);
  return formatTlogProof(extraData === undefined ? { index, proof, signedCheckpoint: cp } : { index, proof, signedCheckpoint: cp, extraData });
}

function outcome(r: VerifyTlogProofResult): string {
  return r.ok ? 'ok' : `${r.stage}/${r.code}`;
}

describe('verifyTlogProof', () => {
  test('every leaf of a 7-leaf tree verifies with the pinned engine key and expected origin', () => {
    for (let i = 0; i < leaves.length; i++) {
      const r = verifyTlogProof(proofFor(i), { verifiers: [key.verifierKey], leafHash: leaves[i]!, origin });
      expect(outcome(r)).toBe('ok');
      expect(r.ok && [r.index, r.checkpoint.size, r.verified.length]).toEqual([i, 7, 1]);
    }
  });

  test('extra data is passed through, unauthenticated', () => {
    const r = verifyTlogProof(proofFor(2, signedCheckpoint, Uint8Array.of(1, 2, 3)), { verifiers: [key], leafHash: leaves[2]! });
    expect(r.ok && [...(r.extraData ?? [])]).toEqual([1, 2, 3]);
  });

  test('each failure is reported at its stage', () => {
    const good = proofFor(3);
    expect(outcome(verifyTlogProof(good, { verifiers: [key], leafHash: leaves[4]! }))).toBe('inclusion/root-mismatch');
    expect(outcome(verifyTlogProof(good.replace('index 3', 'index 2'), { verifiers: [key], leafHash: leaves[3]! }))).toBe('inclusion/root-mismatch');
    expect(outcome(verifyTlogProof(good.replace('index 3', 'index 7'), { verifiers: [key], leafHash: leaves[3]! }))).toBe('inclusion/index-out-of-range');
    expect(outcome(verifyTlogProof(good, { verifiers: [other], leafHash: leaves[3]! }))).toBe('note/no-pinned-signature');
    expect(outcome(verifyTlogProof(good, { verifiers: [key], leafHash: leaves[3]!, origin: `${origin}x` }))).toBe('origin/wrong-origin');
    expect(outcome(verifyTlogProof(good.replace('tlog-proof@v1', 'tlog-proof@v0'), { verifiers: [key], leafHash: leaves[3]! }))).toBe('proof/bad-header');
    const notACheckpoint = proofFor(3, signNote('just a note\n', [key]));
    expect(outcome(verifyTlogProof(notACheckpoint, { verifiers: [key], leafHash: leaves[3]! }))).toBe('checkpoint/malformed-checkpoint');
  });

  test('a proof that drops one hash is the wrong size', () => {
    const proof = inclusionProofFromLeafHashes(hasher, leaves, 3).slice(1);
    const r = verifyTlogProof(formatTlogProof({ index: 3, proof, signedCheckpoint }), { verifiers: [key], leafHash: leaves[3]! });
    expect(outcome(r)).toBe('inclusion/wrong-proof-size');
  });
});
