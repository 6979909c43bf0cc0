/**
 * Generates tests/receipt/golden/receipt.json: the receipts of the golden day
 * (tests/golden/transcript.jsonl) under fixed keys — the engine key is RFC 8032
 * TEST 1's seed, the grader's RFC 8032 TEST 2's. Ed25519 is deterministic, so
 * every byte is reproducible. Run after `npm run build`:
 *   node tests/receipt/golden/gen.mjs > tests/receipt/golden/receipt.json
 */
import { readFileSync } from 'node:fs';
import { ed25519PrivateKeyObject } from '../../../dist/receipt/note/ed25519.js';
import { engineKeyFromPrivateKey, formatPrivateKey, indexBundle, sessionCheckpointText, signNote, turnReceiptFromBundle, signGrade, formatGradeText, formatConsistencyProof } from '../../../dist/receipt/index.js';
import { toHex } from '../../../dist/protocol/index.js';
const seed = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
const key = engineKeyFromPrivateKey('tally.example/golden', ed25519PrivateKeyObject(new Uint8Array(seed)));
const grader = engineKeyFromPrivateKey('grader.example', ed25519PrivateKeyObject(new Uint8Array(Buffer.from('4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb', 'hex'))));
const bundle = readFileSync(new URL('../../golden/transcript.jsonl', import.meta.url));
const ix = await indexBundle([bundle], { entries: [4] });
// The checkpoint bytes of PROTOCOL.md §11, signed directly: these are fixed vectors, not an engine's history.
const checkpointAt = (n) => ({ signedCheckpoint: signNote(sessionCheckpointText(key.name, ix.summary.sessionId, n, ix.tree.root(n)), [key]) });
const cp = checkpointAt(ix.summary.size);
const cp5 = checkpointAt(5);
const r = turnReceiptFromBundle(ix, 4, cp.signedCheckpoint, { verifiers: [key.verifierKey] });
const st = { sessionId: ix.summary.sessionId, size: ix.summary.size, receiptRoot: ix.summary.receiptRoot, grade: { rubric: 'desk-v1', score: 87 } };
const out = {
  engine: { name: key.name, privateKey: formatPrivateKey(key), verifierKey: key.verifierKey },
  grader: { name: grader.name, privateKey: formatPrivateKey(grader), verifierKey: grader.verifierKey },
  sessionId: ix.summary.sessionId, size: ix.summary.size, receiptRoot: ix.summary.receiptRoot,
  checkpoint: cp.signedCheckpoint,
  checkpoint5: cp5.signedCheckpoint,
  consistency5to10: formatConsistencyProof({ oldSize: 5, proof: ix.tree.consistencyProof(5, 10), signedCheckpoint: cp.signedCheckpoint }),
  turnReceipt4: r.text,
  proof4hex: ix.tree.inclusionProof(4, 10).map(toHex),
  gradeText: formatGradeText(st),
  grade: signGrade(st, [grader]),
};
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
