import { fromHex, verifyConsistency, type MerkleFailureCode } from '../../protocol/index.js';
import { decodeBase64Strict, encodeBase64 } from '../note/base64.js';
import { parseDecimal, isTreeCount } from '../checkpoint/decimal.js';
import { MAX_PROOF_HASHES, PROOF_HASH_BYTES } from '../checkpoint/tlogProof.js';
import type { NoteVerifier } from '../note/types.js';
import { TallyError } from '../../protocol/errors.js';
import { openSessionCheckpoint, type OpenSessionCheckpointFailure, type SessionCheckpoint } from '../session/open-checkpoint.js';
import { receiptHasher } from '../session/trees.js';

/** A consistency proof from an older tree size to a newer signed checkpoint. */
export interface ConsistencyProof {
  /** Size of the older tree (the one the monitor already holds a checkpoint for). */
  readonly oldSize: number;
  /** RFC 9162 `PROOF(oldSize, D[0:newSize])`. */
  readonly proof: readonly Uint8Array[];
  /** The newer signed checkpoint, verbatim. */
  readonly signedCheckpoint: string;
}

/**
 * The consistency-proof text, in the shape of a C2SP tlog-witness
 * `add-checkpoint` body: `old <size>\n`, one base64 hash per line, an empty
 * line, the newer signed checkpoint. Throws `TALLY_CONSISTENCY_PROOF_INVALID`
 * on a bad size, a hash that is not 32 bytes, more than 64 hashes or a
 * checkpoint that does not end in a newline.
 *
 * @example
 * formatConsistencyProof({ oldSize: 5, proof, signedCheckpoint })  // 'old 5\n<hash>\n…\n\n<checkpoint>'
 */
export function formatConsistencyProof(input: ConsistencyProof): string {
  const bad = (m: string) => new TallyError('TALLY_CONSISTENCY_PROOF_INVALID', m);
  if (!isTreeCount(input.oldSize)) throw bad('oldSize must be a non-negative safe integer.');
  if (!Array.isArray(input.proof) || input.proof.length > MAX_PROOF_HASHES) throw bad(`A consistency proof has at most ${MAX_PROOF_HASHES} hashes.`);
  if (typeof input.signedCheckpoint !== 'string' || !input.signedCheckpoint.endsWith('\n') || input.signedCheckpoint.startsWith('\n')) {
    throw bad('The signed checkpoint must be non-empty and end with a newline.');
  }
  let out = `old ${input.oldSize}\n`;
  for (const h of input.proof) {
    if (!(h instanceof Uint8Array) || h.length !== PROOF_HASH_BYTES) throw bad(`Every proof hash must be ${PROOF_HASH_BYTES} bytes.`);
    out += `${encodeBase64(h)}\n`;
  }
  return `${out}\n${input.signedCheckpoint}`;
}

/** Outcome of {@link parseConsistencyProof}. */
export type ParseConsistencyProofResult =
  | { readonly ok: true; readonly consistencyProof: ConsistencyProof }
  | { readonly ok: false; readonly code: 'bad-old-size' | 'bad-proof-hash' | 'proof-too-long' | 'missing-checkpoint'; readonly message: string };

/** Parses {@link formatConsistencyProof} text strictly; `format(parse(t)) === t` for every accepted `t`. */
export function parseConsistencyProof(text: string): ParseConsistencyProofResult {
  if (typeof text !== 'string') return { ok: false, code: 'bad-old-size', message: 'consistency proof must be text' };
  let pos = 0;
  const next = (): string | undefined => {
    const nl = text.indexOf('\n', pos);
    if (nl < 0) return undefined;
    const l = text.slice(pos, nl);
    pos = nl + 1;
    return l;
  };
  const first = next();
  const old = first?.startsWith('old ') ? parseDecimal(first.slice(4)) : undefined;
  if (old === undefined || !old.ok) return { ok: false, code: 'bad-old-size', message: 'first line must be "old <decimal size>"' };
  const proof: Uint8Array[] = [];
  for (;;) {
    const line = next();
    if (line === undefined) return { ok: false, code: 'missing-checkpoint', message: 'no blank line before the checkpoint' };
    if (line === '') break;
    const h = decodeBase64Strict(line);
    if (h === undefined || h.length !== PROOF_HASH_BYTES) return { ok: false, code: 'bad-proof-hash', message: `proof line ${proof.length + 1} is not canonical base64 of 32 bytes` };
    if (proof.length === MAX_PROOF_HASHES) return { ok: false, code: 'proof-too-long', message: `more than ${MAX_PROOF_HASHES} proof hashes` };
    proof.push(h);
  }
  const signedCheckpoint = text.slice(pos);
  if (signedCheckpoint === '' || signedCheckpoint.startsWith('\n') || !signedCheckpoint.endsWith('\n')) {
    return { ok: false, code: 'missing-checkpoint', message: 'checkpoint must follow the blank line and end with a newline' };
  }
  return { ok: true, consistencyProof: { oldSize: old.value, proof, signedCheckpoint } };
}

/** Outcome of {@link verifyCheckpointConsistency}. */
export type VerifyConsistencyResult =
  | { readonly ok: true; readonly older: SessionCheckpoint; readonly newer: SessionCheckpoint }
  | (OpenSessionCheckpointFailure & { readonly which: 'older' | 'newer' })
  | { readonly ok: false; readonly stage: 'consistency'; readonly code: MerkleFailureCode | 'different-logs' | 'size-order'; readonly message: string };

/**
 * Checks that the session only grew between two signed checkpoints: both
 * open against the pinned keys, both name the same engine and session, the
 * older is not larger, and the RFC 9162 consistency proof links their roots
 * (an empty proof and equal roots for equal sizes). What a monitor runs on
 * every new checkpoint it sees.
 *
 * @example
 * const r = verifyCheckpointConsistency(kept, latest, proof, { verifiers: [engineVkey] });
 * if (!r.ok) alarm(r.message);
 */
export function verifyCheckpointConsistency(
  older: string,
  newer: string,
  proof: readonly Uint8Array[],
  options: { readonly verifiers: readonly (NoteVerifier | string)[] },
): VerifyConsistencyResult {
  const a = openSessionCheckpoint(older, options.verifiers);
  if (!a.ok) return { ...a, which: 'older' };
  const b = openSessionCheckpoint(newer, options.verifiers);
  if (!b.ok) return { ...b, which: 'newer' };
  const o = a.checkpoint;
  const n = b.checkpoint;
  if (o.origin !== n.origin) return { ok: false, stage: 'consistency', code: 'different-logs', message: `checkpoints are of different logs: ${o.origin} and ${n.origin}` };
  if (o.size > n.size) return { ok: false, stage: 'consistency', code: 'size-order', message: `the older checkpoint (${o.size}) is larger than the newer (${n.size})` };
  const v = verifyConsistency(receiptHasher, o.size, n.size, proof, fromHex(o.root), fromHex(n.root));
  if (!v.ok) return { ok: false, stage: 'consistency', code: v.code, message: v.message };
  return { ok: true, older: o, newer: n };
}
