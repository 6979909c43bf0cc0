import type { NoteVerifier } from '../note/types.js';
import { openSessionCheckpoint } from '../session/open-checkpoint.js';
import { checkTurnReceipt, parseTurnReceipt, type ReceiptPin, type VerifyTurnReceiptResult } from './turn-receipt-check.js';

export { formatTurnReceipt } from './turn-receipt-text.js';
export { checkTurnReceipt, parseTurnReceipt, pinMismatch, verifyTurnReceiptWith } from './turn-receipt-check.js';
export type { CheckpointOpener, ParsedTurnReceipt, ReceiptPin, VerifyTurnReceiptResult } from './turn-receipt-check.js';
export type { TurnReceiptInput } from './turn-receipt-text.js';

/** Options of {@link verifyTurnReceipt}. */
export interface VerifyTurnReceiptOptions {
  /** The engine's verifier key(s) (`name+keyid+base64` or parsed); the checkpoint must be signed by one named in its origin. */
  readonly verifiers: readonly (NoteVerifier | string)[];
  /** Pins the checkpoint: session, tree size and root must equal these when given. */
  readonly pin?: ReceiptPin;
}

/**
 * Verifies a single-turn receipt offline with nothing but the engine's
 * verifier key, in order: parse the tlog-proof; require the entry bytes in
 * `extra`; open the checkpoint (pinned signature, origin
 * `<signer name>/<session>`); check the entry on its own (canonical bytes,
 * structure, its own hashes) and that it names the checkpoint's session (a
 * genesis only at index 0, where its hash IS the session id; a seal only at
 * the index its `size` says); check RFC 6962 inclusion of
 * `SHA-256(0x00 ‖ entry bytes)` at `index` in the checkpoint's tree; compare
 * the pins. Never throws on input.
 *
 * @example
 * const r = verifyTurnReceipt(text, { verifiers: ['tally.local+1a2b3c4d+AV…'] });
 * if (r.ok) console.log(r.entry.kind, r.checkpoint.size); else console.error(r.stage, r.code, r.message);
 */
export function verifyTurnReceipt(text: string, options: VerifyTurnReceiptOptions): VerifyTurnReceiptResult {
  const parsed = parseTurnReceipt(text);
  if (!parsed.ok) return parsed;
  const opened = openSessionCheckpoint(parsed.signedCheckpoint, options.verifiers);
  return opened.ok ? checkTurnReceipt(parsed, opened.checkpoint, options.pin) : opened;
}
