/**
 * The rules of a single-turn receipt (§11.4), split at the one step that
 * needs a signature check: parse the tlog-proof, open its checkpoint (the
 * caller's opener: node:crypto in `verifyTurnReceipt`, WebCrypto in the
 * grader's page), then check the entry and its inclusion. This file loads no
 * Node module, so the page bundles the very rules the CLI runs.
 */
import { toHex, verifyInclusion, fromHex, type Entry, type MerkleFailureCode } from '../../protocol/index.js';
import { parseTlogProof, type TlogProofCode } from '../checkpoint/tlogProof.js';
import type { OpenSessionCheckpointFailure, OpenSessionCheckpointResult, SessionCheckpoint } from '../session/checkpoint-note.js';
import { receiptHasher } from '../session/receipt-hasher.js';
import { checkEntryBytes, type EntryCheckCode } from './entry-check.js';

/** Values a grader pins out of band (for example from the sealed checkpoint they were handed). */
export interface ReceiptPin {
  readonly sessionId?: string;
  readonly size?: number;
  readonly receiptRoot?: string;
}

/** Outcome of {@link verifyTurnReceipt}. */
export type VerifyTurnReceiptResult =
  | {
      readonly ok: true;
      readonly index: number;
      readonly sessionId: string;
      /** Entry hash (hex) = its leaf hash. */
      readonly entryHash: string;
      readonly entry: Entry;
      readonly entryBytes: Uint8Array;
      readonly checkpoint: SessionCheckpoint;
    }
  | { readonly ok: false; readonly stage: 'proof'; readonly code: TlogProofCode | 'missing-entry'; readonly message: string }
  | OpenSessionCheckpointFailure
  | { readonly ok: false; readonly stage: 'entry'; readonly code: EntryCheckCode | 'wrong-session' | 'wrong-position'; readonly message: string }
  | { readonly ok: false; readonly stage: 'inclusion'; readonly code: MerkleFailureCode; readonly message: string }
  | { readonly ok: false; readonly stage: 'pin'; readonly code: 'pin-mismatch'; readonly message: string };

/** A parsed receipt: its tlog-proof's index, proof and signed checkpoint, and the entry bytes it carries. */
export interface ParsedTurnReceipt {
  readonly ok: true;
  readonly index: number;
  readonly proof: readonly Uint8Array[];
  readonly signedCheckpoint: string;
  readonly extraData: Uint8Array;
}

/** Opens a signed session checkpoint with pinned keys (synchronously or not). */
export type CheckpointOpener = (signedCheckpoint: string) => OpenSessionCheckpointResult | Promise<OpenSessionCheckpointResult>;

/** Parses a receipt's tlog-proof and requires the entry bytes in its `extra` line. Never throws on input. */
export function parseTurnReceipt(text: string): ParsedTurnReceipt | Extract<VerifyTurnReceiptResult, { stage: 'proof' }> {
  const parsed = parseTlogProof(text);
  if (!parsed.ok) return { ok: false, stage: 'proof', code: parsed.code, message: parsed.message };
  const { index, proof, signedCheckpoint, extraData } = parsed.tlogProof;
  if (extraData === undefined || extraData.length === 0) {
    return { ok: false, stage: 'proof', code: 'missing-entry', message: 'the proof carries no entry bytes (no "extra" line): it is not a Tally turn receipt' };
  }
  return { ok: true, index, proof, signedCheckpoint, extraData };
}

/**
 * Checks a parsed receipt under its opened checkpoint `cp`: the entry on its
 * own (canonical bytes, structure, its own hashes) and that it names the
 * checkpoint's session (a genesis only at index 0, where its hash IS the
 * session id; a seal only at the index its `size` says); RFC 6962 inclusion of
 * `SHA-256(0x00 ‖ entry bytes)` at `index`; the pins.
 */
export function checkTurnReceipt(parsed: ParsedTurnReceipt, cp: SessionCheckpoint, pin: ReceiptPin | undefined): VerifyTurnReceiptResult {
  const { index, proof, extraData } = parsed;
  const checked = checkEntryBytes(extraData);
  if (!checked.ok) return { ok: false, stage: 'entry', code: checked.code, message: checked.message };
  const entry = checked.entry;
  // inspectLine hashed the line already: the entry hash IS the leaf hash (bytes.ts, entryLeafHash).
  const leaf = checked.hash;
  const entryHash = toHex(leaf);
  const fail = (code: 'wrong-session' | 'wrong-position', message: string): VerifyTurnReceiptResult => ({ ok: false, stage: 'entry', code, message });
  if (entry.kind === 'genesis') {
    if (index !== 0) return fail('wrong-position', `a genesis entry can only be at index 0, not ${index}`);
    if (entryHash !== cp.sessionId) return fail('wrong-session', `this genesis starts session ${entryHash}, the checkpoint is for ${cp.sessionId}`);
  } else {
    if (index === 0) return fail('wrong-position', `index 0 must hold the genesis, not a ${entry.kind}`);
    if (entry.session !== cp.sessionId) return fail('wrong-session', `the entry names session ${entry.session}, the checkpoint is for ${cp.sessionId}`);
    if (entry.kind === 'finalize' && entry.size !== index) return fail('wrong-position', `a seal with size ${entry.size} can only be at index ${entry.size}, not ${index}`);
  }
  const inc = verifyInclusion(receiptHasher, index, cp.size, leaf, proof, fromHex(cp.root));
  if (!inc.ok) return { ok: false, stage: 'inclusion', code: inc.code, message: inc.message };
  if (pin) {
    const bad = pinMismatch(cp, pin);
    if (bad) return { ok: false, stage: 'pin', code: 'pin-mismatch', message: bad };
  }
  return { ok: true, index, sessionId: cp.sessionId, entryHash, entry, entryBytes: extraData, checkpoint: cp };
}

/** {@link parseTurnReceipt}, `open`, {@link checkTurnReceipt}: a receipt verified with the caller's checkpoint opener. */
export async function verifyTurnReceiptWith(text: string, open: CheckpointOpener, pin?: ReceiptPin): Promise<VerifyTurnReceiptResult> {
  const parsed = parseTurnReceipt(text);
  if (!parsed.ok) return parsed;
  const opened = await open(parsed.signedCheckpoint);
  return opened.ok ? checkTurnReceipt(parsed, opened.checkpoint, pin) : opened;
}

/** A message when `cp` differs from `pin`, else `undefined`. */
export function pinMismatch(cp: Pick<SessionCheckpoint, 'sessionId' | 'size' | 'root'>, pin: ReceiptPin): string | undefined {
  if (pin.sessionId !== undefined && pin.sessionId !== cp.sessionId) return `checkpoint is for session ${cp.sessionId}, the pin says ${pin.sessionId}`;
  if (pin.size !== undefined && pin.size !== cp.size) return `checkpoint has ${cp.size} entries, the pin says ${pin.size}`;
  if (pin.receiptRoot !== undefined && pin.receiptRoot !== cp.root) return `checkpoint root ${cp.root} is not the pinned ${pin.receiptRoot}`;
  return undefined;
}
