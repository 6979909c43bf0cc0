import { parseConsistencyProof, verifyCheckpointConsistency } from '../receipt/proof/consistency.js';
import { openSessionCheckpoint, type SessionCheckpoint } from '../receipt/session/open-checkpoint.js';
import type { NoteVerifier } from '../receipt/note/types.js';

/** Proof that a log showed two views that cannot both be honest: both signed checkpoints, and the proof that failed. */
export interface Equivocation {
  /** The checkpoint the monitor held (signed by the log). */
  readonly older: string;
  /** The checkpoint the log then served (signed by the log). */
  readonly newer: string;
  /** The consistency proof text the log served (`old <n>`, hashes, blank line, `newer`). */
  readonly proof: string;
  readonly code: string;
  readonly message: string;
}

/** One round of {@link monitorCheckpoints}. */
export type MonitorRound =
  | { readonly kind: 'consistent'; readonly round: number; readonly from: number; readonly size: number; readonly root: string }
  | { readonly kind: 'unavailable'; readonly round: number; readonly message: string };

/** Outcome of {@link monitorCheckpoints}. */
export type MonitorResult =
  | { readonly ok: true; readonly latest: SessionCheckpoint | undefined; readonly rounds: number }
  | { readonly ok: false; readonly kind: 'equivocation'; readonly evidence: Equivocation }
  | { readonly ok: false; readonly kind: 'bad-checkpoint'; readonly message: string };

/** What a monitor needs of a serving engine. */
export interface MonitorSource {
  /** The latest signed checkpoint (text), or an error message. */
  checkpoint(): Promise<{ readonly ok: true; readonly text: string } | { readonly ok: false; readonly message: string }>;
  /** A consistency proof text from size `from` to the latest size (the `tally serve` consistency route). */
  consistency(from: number): Promise<{ readonly ok: true; readonly text: string } | { readonly ok: false; readonly message: string }>;
}

/** Options of {@link monitorCheckpoints}. */
export interface MonitorOptions {
  readonly source: MonitorSource;
  /** The engine's verifier keys (every checkpoint must be signed by one). */
  readonly verifiers: readonly (NoteVerifier | string)[];
  /** Number of rounds (bounded loop). */
  readonly rounds: number;
  /** Pause between rounds (default 0). */
  readonly intervalMs?: number;
  /** A checkpoint already held (from a grader, another view…): the log must be consistent with it. */
  readonly seed?: string;
  readonly onRound?: (r: MonitorRound) => void;
}

/**
 * Follows a log's checkpoints for a bounded number of rounds: each round asks
 * for a consistency proof from the size it holds to the latest and verifies
 * it (`verifyCheckpointConsistency`: both signed by the pinned key, same
 * origin, sizes in order, RFC 9162 proof). A proof that fails — including
 * another root at the held size — is an equivocation, returned with both
 * signed checkpoints as evidence. An unreachable source is reported per round
 * and retried, never taken as evidence.
 *
 * @example
 * const r = await monitorCheckpoints({ source, verifiers: [engineVkey], rounds: 10, intervalMs: 1000 });
 * if (!r.ok && r.kind === 'equivocation') publish(r.evidence);
 */
export async function monitorCheckpoints(options: MonitorOptions): Promise<MonitorResult> {
  let held: SessionCheckpoint | undefined;
  if (options.seed !== undefined) {
    const o = openSessionCheckpoint(options.seed, options.verifiers);
    if (!o.ok) return { ok: false, kind: 'bad-checkpoint', message: `the seed checkpoint: ${o.message}` };
    held = o.checkpoint;
  }
  for (let round = 1; round <= options.rounds; round++) {
    if (round > 1 && (options.intervalMs ?? 0) > 0) await new Promise((r) => setTimeout(r, options.intervalMs));
    if (held === undefined) {
      const c = await options.source.checkpoint();
      if (!c.ok) {
        options.onRound?.({ kind: 'unavailable', round, message: c.message });
        continue;
      }
      const o = openSessionCheckpoint(c.text, options.verifiers);
      if (!o.ok) return { ok: false, kind: 'bad-checkpoint', message: `served checkpoint: ${o.message}` };
      held = o.checkpoint;
      options.onRound?.({ kind: 'consistent', round, from: 0, size: held.size, root: held.root });
      continue;
    }
    const p = await options.source.consistency(held.size);
    if (!p.ok) {
      options.onRound?.({ kind: 'unavailable', round, message: p.message });
      continue;
    }
    const parsed = parseConsistencyProof(p.text);
    if (!parsed.ok) return { ok: false, kind: 'bad-checkpoint', message: `served proof: ${parsed.message}` };
    const { oldSize, proof, signedCheckpoint } = parsed.consistencyProof;
    if (oldSize !== held.size) return { ok: false, kind: 'bad-checkpoint', message: `served a proof from ${oldSize}, asked from ${held.size}` };
    const v = verifyCheckpointConsistency(held.signedCheckpoint, signedCheckpoint, proof, { verifiers: options.verifiers });
    if (!v.ok) {
      if (v.stage !== 'consistency' && v.which === 'newer') return { ok: false, kind: 'bad-checkpoint', message: `served checkpoint: ${v.message}` };
      return { ok: false, kind: 'equivocation', evidence: { older: held.signedCheckpoint, newer: signedCheckpoint, proof: p.text, code: v.code, message: v.message } };
    }
    options.onRound?.({ kind: 'consistent', round, from: held.size, size: v.newer.size, root: v.newer.root });
    held = v.newer;
  }
  return { ok: true, latest: held, rounds: options.rounds };
}
