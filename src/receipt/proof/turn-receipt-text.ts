/**
 * THE text of a single-turn receipt (a C2SP tlog-proof carrying the entry's
 * bytes). Pure and browser-safe: the audit page writes receipts with it.
 */
import { formatTlogProof } from '../checkpoint/tlogProof.js';

/** Input of {@link formatTurnReceipt}. */
export interface TurnReceiptInput {
  /** The entry's 0-based index in its session. */
  readonly index: number;
  /** RFC 6962 inclusion path of the entry in the checkpoint's tree. */
  readonly proof: readonly Uint8Array[];
  /** The signed session checkpoint the proof is against, verbatim. */
  readonly signedCheckpoint: string;
  /** The entry's exact canonical bytes (one bundle line without its newline). */
  readonly entryBytes: Uint8Array;
}

/**
 * A single-turn receipt: one standard C2SP tlog-proof whose `extra` line is
 * the entry's canonical bytes (base64). Verifiers recompute the leaf hash
 * from those bytes, so the extra data — unauthenticated in tlog-proof — is
 * authenticated here by the inclusion proof. Throws `TALLY_TLOG_PROOF_INVALID`
 * on a malformed index, proof or checkpoint. Store it as `<name>.tlog-proof`.
 *
 * @example
 * const text = formatTurnReceipt({ index: 4, proof, signedCheckpoint, entryBytes });
 * // 'c2sp.org/tlog-proof@v1\nextra eyJib2R5Ijp7…\nindex 4\n…\n\ntally.local/<sid>\n10\n…'
 */
export function formatTurnReceipt(input: TurnReceiptInput): string {
  return formatTlogProof({ index: input.index, proof: input.proof, signedCheckpoint: input.signedCheckpoint, extraData: input.entryBytes });
}

