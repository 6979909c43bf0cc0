/**
 * The engine's signing log: the one gate every checkpoint signature by the
 * engine key passes. A checkpoint is recorded — durably, in the engine's own
 * store, beside the entries it commits to — before it is signed, and it is
 * refused when it would contradict a checkpoint the key signed earlier:
 *
 * - a second root for one (origin, size) is equivocation
 *   (`TALLY_SIGN_EQUIVOCATION`);
 * - a checkpoint whose tree is not an extension (or a prefix) of the
 *   origin's latest signed one, by an RFC 6962 consistency proof computed
 *   from the store's tree and checked against the recorded root, is
 *   inconsistent (`TALLY_SIGN_INCONSISTENT`).
 *
 * That is the rule Trillian and Tessera keep (a log never signs two
 * inconsistent checkpoints). Checking against the latest record suffices:
 * every record was checked against the latest one before it, so all records
 * of an origin are prefixes of one tree, and a checkpoint consistent with the
 * largest is consistent with every one.
 */
import { TallyError, engineLogLeafBytes, fromHex, toHex, verifyConsistency } from '../../protocol/index.js';
import { hasContinuity, type ExpectedLatest, type SignedCheckpointRecord, type SigningLogStore } from '../../store/types.js';
import { describeValue } from '../bytes.js';
import { receiptHasher } from '../session/trees.js';
import { ContinuityRefusedError, describePosition, judgeContinuity, samePlace } from './continuity.js';

/** The stable codes of a refused signature. */
export const SIGN_REFUSAL_CODES = ['TALLY_SIGN_EQUIVOCATION', 'TALLY_SIGN_INCONSISTENT'] as const;
/** Why the signing log refused a checkpoint. */
export type SignRefusalCode = (typeof SIGN_REFUSAL_CODES)[number];

/** The engine key refused to sign a checkpoint (nothing was recorded or signed). */
export class SigningRefusedError extends TallyError {
  declare readonly code: SignRefusalCode;
  /** The checkpoint that was refused. */
  readonly checkpoint: { readonly origin: string; readonly size: number; readonly root: string };
  /** The earlier signed checkpoint it contradicts. */
  readonly recorded: SignedCheckpointRecord;

  constructor(code: SignRefusalCode, message: string, checkpoint: SigningLogRefusal['checkpoint'], recorded: SignedCheckpointRecord) {
    super(code, message, { details: `refused ${checkpoint.origin} size ${checkpoint.size} root ${checkpoint.root}; signed earlier: size ${recorded.size} root ${recorded.root}` });
    this.name = 'SigningRefusedError';
    this.checkpoint = checkpoint;
    this.recorded = recorded;
  }
}

/**
 * What the log needs of the store's tree of an origin's session: its size,
 * roots and consistency proofs (a `PackedMerkleTree` from `SessionTrees`;
 * the engine log's tree answers proofs asynchronously, from stored tiles).
 */
export interface ConsistencySource {
  readonly size: number;
  consistencyProof(size1: number, size2: number): Uint8Array[] | Promise<Uint8Array[]>;
}

/** A checkpoint about to be signed. */
export interface CheckpointToSign {
  /** `<engine name>/<session id>`. */
  readonly origin: string;
  readonly size: number;
  /** RFC 6962 root of the first `size` entries of `tree`. */
  readonly root: Uint8Array;
  /**
   * A session checkpoint: the engine log records it (a `checkpoint` leaf,
   * appended with the record; `seal` when it covers the finalize entry).
   * Absent for a checkpoint of the engine log itself, which is no leaf.
   */
  readonly session?: { readonly seal: boolean };
}

/** A refusal of {@link SigningLog.record}. */
export interface SigningLogRefusal {
  readonly ok: false;
  readonly code: SignRefusalCode;
  readonly message: string;
  readonly checkpoint: { readonly origin: string; readonly size: number; readonly root: string };
  /** The earlier signed checkpoint it contradicts. */
  readonly recorded: SignedCheckpointRecord;
}

/** Outcome of {@link SigningLog.record}: sign only on `ok`. */
export type SigningLogResult = { readonly ok: true; readonly duplicate: boolean; readonly record: SignedCheckpointRecord } | SigningLogRefusal;

/** Options of {@link SigningLog}. */
export interface SigningLogOptions {
  /** The clock for `signedAt` (epoch ms; default `Date.now`). */
  readonly now?: () => number;
  /** Compare-and-record attempts while other signers keep moving the origin's latest record (default 16). */
  readonly maxAttempts?: number;
}

/**
 * The signing log over a store (see the module comment for the rule).
 * `record` before every signature; `latest` and `list` read what the key
 * has signed (a witness or monitor builds on these).
 *
 * @example
 * const log = new SigningLog(engine.store);
 * const r = await log.record({ origin, size, root }, tree);
 * if (!r.ok) throw SigningLog.refusalError(r);
 * const signed = signNote(text, [key]);  // only now
 */
export class SigningLog {
  readonly #store: SigningLogStore;
  readonly #now: () => number;
  readonly #attempts: number;

  constructor(store: SigningLogStore, options: SigningLogOptions = {}) {
    if (!store || typeof store.recordCheckpoint !== 'function') throw new TallyError('TALLY_SIGN_NO_LOG', 'The store keeps no signing log (recordCheckpoint); the engine key signs nothing without one.');
    this.#store = store;
    this.#now = options.now ?? Date.now;
    this.#attempts = Math.max(1, options.maxAttempts ?? 16);
  }

  /**
   * Records `checkpoint` as signed if the rule allows it (durably, before
   * the caller signs), checking consistency with the origin's latest record
   * through a proof computed from `tree` (the store's tree of the session).
   * Recording the same (origin, size, root) again is a `duplicate`, allowed
   * (the signature is the same bytes). Throws `TALLY_SIGN_CONTENDED` if other
   * signers keep moving the origin's latest record, and store errors as they
   * come.
   */
  async record(checkpoint: CheckpointToSign, tree: ConsistencySource): Promise<SigningLogResult> {
    const { origin, size } = checkpoint;
    if (typeof origin !== 'string' || !Number.isSafeInteger(size) || size < 1 || !(checkpoint.root instanceof Uint8Array) || checkpoint.root.length !== 32) {
      throw new TallyError('TALLY_SIGN_MISUSE', 'record needs an origin, a size >= 1 and a 32-byte root.', { details: `origin ${describeValue(origin)}, size ${describeValue(size)}` });
    }
    const root = toHex(checkpoint.root);
    const asked = { origin, size, root };
    // Continuity first (./continuity.ts): on a store that failed over or was replaced, nothing is signed until it is proven to hold what was.
    const store = this.#store;
    const state = hasContinuity(store) ? await store.continuityState() : undefined;
    if (state !== undefined) {
      const verdict = judgeContinuity(state);
      if (!verdict.ok) {
        if (verdict.record !== undefined && hasContinuity(store)) await store.recordContinuityEvent({ ...verdict.record, at: this.#now() });
        throw new ContinuityRefusedError(verdict.message, state.current);
      }
    }
    for (let attempt = 0; attempt < this.#attempts; attempt++) {
      const latest = await this.#store.latestCheckpoint(origin);
      if (latest && latest.size !== size) {
        const why = await inconsistency(latest, size, checkpoint.root, tree);
        if (why !== undefined) return refusal('TALLY_SIGN_INCONSISTENT', why, asked, latest);
      }
      const expected: ExpectedLatest = latest && { size: latest.size, root: latest.root };
      const leaf = checkpoint.session && engineLogLeafBytes({ kind: 'checkpoint', origin, size, root, seal: checkpoint.session.seal });
      const out = await this.#store.recordCheckpoint({ origin, size, root, signedAt: this.#now() }, expected, leaf);
      if (out.ok) {
        // The store moved between the check and the record (a failover in between): the row is harmless unsigned; sign nothing.
        const at = out.record.position;
        if (state !== undefined && !out.duplicate && at !== undefined && !samePlace(at, state.current)) {
          throw new ContinuityRefusedError(`the store moved from ${describePosition(state.current)} to ${describePosition(at)} while the checkpoint was recorded`, at);
        }
        return out;
      }
      if (out.reason === 'equivocation') {
        return refusal('TALLY_SIGN_EQUIVOCATION', `the engine already signed another root for ${origin} at size ${size}`, asked, out.record);
      }
      // latest-moved: another signer recorded meanwhile; check against the new latest.
    }
    throw new TallyError('TALLY_SIGN_CONTENDED', `Other signers kept recording checkpoints of ${origin}; nothing was signed. Retry.`);
  }

  /** The largest checkpoint the key has signed for `origin`, if any. */
  latest(origin: string): Promise<SignedCheckpointRecord | undefined> {
    return this.#store.latestCheckpoint(origin);
  }

  /** Every checkpoint the key has signed for `origin`, by size. */
  list(origin: string): Promise<SignedCheckpointRecord[]> {
    return this.#store.signedCheckpoints(origin);
  }

  /** The typed error for a refusal (what the notary throws). */
  static refusalError(r: SigningLogRefusal): SigningRefusedError {
    return new SigningRefusedError(r.code, `The engine key refuses to sign: ${r.message}.`, r.checkpoint, r.recorded);
  }
}

function refusal(code: SignRefusalCode, message: string, checkpoint: SigningLogRefusal['checkpoint'], recorded: SignedCheckpointRecord): SigningLogRefusal {
  return { ok: false, code, message, checkpoint, recorded };
}

/**
 * Why (size, root) is not consistent with the recorded `latest`, or
 * `undefined` when it is: the RFC 6962 consistency proof between the two
 * sizes, computed from the store's tree, must link `root` and the recorded
 * root (the protocol's `verifyConsistency`, the check every monitor runs).
 */
async function inconsistency(latest: SignedCheckpointRecord, size: number, root: Uint8Array, tree: ConsistencySource): Promise<string | undefined> {
  const recorded = fromHex(latest.root);
  const big = Math.max(size, latest.size);
  if (big > tree.size) return `the engine signed size ${latest.size} of this origin, but the store's tree has only ${tree.size} entries`;
  const v =
    size < latest.size
      ? verifyConsistency(receiptHasher, size, latest.size, await tree.consistencyProof(size, latest.size), root, recorded)
      : verifyConsistency(receiptHasher, latest.size, size, await tree.consistencyProof(latest.size, size), recorded, root);
  return v.ok ? undefined : `size ${size} is not consistent with the checkpoint signed at size ${latest.size} (${v.code})`;
}
