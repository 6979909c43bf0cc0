/**
 * The golden day's receipts (tests/receipt/golden/receipt.json, made by gen.mjs
 * under fixed RFC 8032 keys) must be reproduced byte for byte, verify, and be
 * checkable by independent code: noble's Ed25519 over the note text, a
 * reference Merkle tree over noble SHA-256. PROTOCOL.md §11 quotes these values.
 */
import { readFileSync } from 'node:fs';
import { ed25519 } from '@noble/curves/ed25519';
import { sha256 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import {
  indexBundle,
  openSessionCheckpoint,
  parseConsistencyProof,
  parsePrivateKey,
  sessionCheckpointText,
  signGrade,
  signNote,
  turnReceiptFromBundle,
  verifyCheckpointConsistency,
  verifyGrade,
  verifyTurnReceipt,
} from '../../src/receipt/index.js';
import { inclusionProofFromLeafHashes, rfc6962Hasher, toHex } from '../../src/protocol/index.js';

const g = JSON.parse(readFileSync(new URL('./golden/receipt.json', import.meta.url), 'utf8')) as {
  engine: { privateKey: string; verifierKey: string };
  grader: { privateKey: string; verifierKey: string };
  sessionId: string;
  size: number;
  receiptRoot: string;
  checkpoint: string;
  checkpoint5: string;
  consistency5to10: string;
  turnReceipt4: string;
  proof4hex: string[];
  gradeText: string;
  grade: string;
};
const bundle = readFileSync(new URL('../golden/transcript.jsonl', import.meta.url));
const engine = parsePrivateKey(g.engine.privateKey);
const grader = parsePrivateKey(g.grader.privateKey);

describe('golden receipts', () => {
  it('are reproduced byte for byte from the golden bundle and the fixed keys', async () => {
    expect(engine.verifierKey).toBe(g.engine.verifierKey);
    const ix = await indexBundle([bundle], { entries: [4] });
    if (!ix.ok) throw new Error(ix.message);
    // The checkpoint bytes (PROTOCOL.md §11) signed with the engine key; the engine itself signs only through its signing log.
    const checkpointAt = (n: number) => signNote(sessionCheckpointText(engine.name, ix.summary.sessionId, n, ix.tree.root(n)), [engine]);
    expect(checkpointAt(ix.summary.size)).toBe(g.checkpoint);
    expect(checkpointAt(5)).toBe(g.checkpoint5);
    expect(turnReceiptFromBundle(ix, 4, g.checkpoint, { verifiers: [g.engine.verifierKey] })).toMatchObject({ ok: true, text: g.turnReceipt4 });
    expect(signGrade({ sessionId: g.sessionId, size: g.size, receiptRoot: g.receiptRoot, grade: { rubric: 'desk-v1', score: 87 } }, [grader])).toBe(g.grade);
  });

  it('verify with the verifier keys alone', () => {
    expect(openSessionCheckpoint(g.checkpoint, [g.engine.verifierKey])).toMatchObject({ ok: true, checkpoint: { sessionId: g.sessionId, size: 10, root: g.receiptRoot } });
    expect(verifyTurnReceipt(g.turnReceipt4, { verifiers: [g.engine.verifierKey], pin: { sessionId: g.sessionId, size: g.size, receiptRoot: g.receiptRoot } })).toMatchObject({ ok: true, index: 4, entry: { kind: 'turn', ordinal: 0 } });
    const c = parseConsistencyProof(g.consistency5to10);
    expect(c.ok && verifyCheckpointConsistency(g.checkpoint5, c.consistencyProof.signedCheckpoint, c.consistencyProof.proof, { verifiers: [g.engine.verifierKey] }).ok).toBe(true);
    expect(verifyGrade(g.grade, { verifiers: [g.grader.verifierKey], transcript: g })).toMatchObject({ ok: true, statement: { grade: { rubric: 'desk-v1', score: 87 } } });
  });

  it('independent code agrees: noble Ed25519 over the note text, a reference tree over noble SHA-256', () => {
    // A verifier key splits into at most three parts: its base64 may contain "+" (this one does).
    const [, keyIdHex, ...b64] = g.engine.verifierKey.split('+');
    expect(b64.length).toBeGreaterThan(1);
    const pub = Buffer.from(b64.join('+'), 'base64').subarray(1);
    const text = g.checkpoint.slice(0, g.checkpoint.indexOf('\n\n') + 1);
    const sig = Buffer.from(g.checkpoint.slice(g.checkpoint.lastIndexOf(' ') + 1, -1), 'base64');
    // Signature line bytes: 4-byte key ID, then the 64-byte signature of the UTF-8 note text.
    expect(sig.subarray(0, 4).toString('hex')).toBe(keyIdHex);
    expect(ed25519.verify(sig.subarray(4), new TextEncoder().encode(text), pub)).toBe(true);
    const ref = rfc6962Hasher(sha256);
    const lines = bundle.toString('utf8').split('\n').slice(0, -1).map((l) => new TextEncoder().encode(l));
    expect(inclusionProofFromLeafHashes(ref, lines.map((l) => ref.hashLeaf(l)), 4).map(toHex)).toEqual(g.proof4hex);
    expect(Buffer.from(text.split('\n')[2]!, 'base64').toString('hex')).toBe(g.receiptRoot);
    expect(g.gradeText).toBe(g.grade.slice(0, g.grade.indexOf('\n\n') + 1));
  });
});
