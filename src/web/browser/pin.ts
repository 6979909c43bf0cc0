/**
 * Opening the pin in the worker: the engine verifier keys, the signed
 * checkpoint (from a receipt note or a tlog-proof), the witness quorum when a
 * policy is given, then `sessionCheckpointFromNote` — the rules of `tally
 * verify --key --checkpoint [--policy]`, with WebCrypto Ed25519.
 */
import { parseTlogProof, TLOG_PROOF_HEADER } from '../../receipt/checkpoint/tlogProof.js';
import { decodeVerifierKey } from '../../receipt/note/verifier-key-text.js';
import { sessionCheckpointFromNote, type SessionCheckpoint } from '../../receipt/session/checkpoint-note.js';
import { openNoteWebCrypto } from './crypto.js';
import type { Verdict, Witnessed } from './messages.js';
import { checkWitnesses } from './witness.js';

/** A failed pin, as the banner shows it. */
export type PinFailure = Extract<Verdict, { state: 'failed-pin' }>;

/** The signed checkpoint inside a receipt note or a tlog-proof (whose checkpoint follows its proof). */
function signedCheckpointOf(text: string): string | { problem: string } {
  if (!text.startsWith(`${TLOG_PROOF_HEADER}\n`)) return text;
  const p = parseTlogProof(text);
  return p.ok ? p.tlogProof.signedCheckpoint : { problem: `tlog-proof: ${p.code}: ${p.message}` };
}

/** Opens the checkpoint `cpText` with the keys in `vkeyText` (one a line), under the witness policy when given. */
export async function openPin(cpText: string, vkeyText: string, policyText: string | undefined): Promise<{ cp: SessionCheckpoint; witnessed?: Witnessed } | PinFailure> {
  const keys = [];
  for (const line of vkeyText.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))) {
    const k = decodeVerifierKey(line);
    if (!k.ok) return { state: 'failed-pin', stage: 'key', code: k.code, message: k.message };
    keys.push(k.key);
  }
  if (keys.length === 0) return { state: 'failed-pin', stage: 'key', code: 'malformed-verifier-key', message: 'no verifier key given' };
  const signed = signedCheckpointOf(cpText);
  if (typeof signed !== 'string') return { state: 'failed-pin', stage: 'proof', code: 'bad-tlog-proof', message: signed.problem };
  // With a policy, the quorum first (as verifyWitnessedBundleCheckpoint: cheap, and a refusal there is the CLI's).
  const witnessed = policyText === undefined ? undefined : await checkWitnesses(signed, keys, policyText);
  if (witnessed !== undefined && 'state' in witnessed) return witnessed;
  const opened = sessionCheckpointFromNote(await openNoteWebCrypto(signed, keys), signed);
  if (!opened.ok) return { state: 'failed-pin', stage: opened.stage, code: opened.code, message: opened.message };
  return { cp: opened.checkpoint, ...(witnessed === undefined ? {} : { witnessed }) };
}
