import { createHash } from 'node:crypto';
import { verifyConsistency } from '../protocol/index.js';
import { TallyError } from '../protocol/errors.js';
import { splitSessionOrigin } from '../receipt/bytes.js';
import { parseCheckpoint } from '../receipt/checkpoint/checkpoint.js';
import { openNote } from '../receipt/note/open.js';
import type { ParsedVerifierKey } from '../receipt/note/types.js';
import { parseVerifierKey } from '../receipt/note/verifierKey.js';
import { parseConsistencyProof } from '../receipt/proof/consistency.js';
import { receiptHasher } from '../receipt/session/trees.js';
import { addSignatureLines, cosignatureLine } from './cosignature/cosign.js';
import type { CosignerKey } from './cosignature/key.js';
import { sameRoot, type WitnessRecord, type WitnessStore } from './state/types.js';

/** Most consistency-proof lines an `add-checkpoint` body may carry (C2SP tlog-witness). */
export const MAX_ADD_CHECKPOINT_PROOF_LINES = 63;

/** Every reason a witness refuses to cosign, with the HTTP status C2SP tlog-witness gives it. */
export const ADD_CHECKPOINT_CODES = {
  /** The body is not `old <n>`, proof lines, a blank line and a signed checkpoint; or the checkpoint text is malformed. */
  'malformed-request': 400,
  /** `old` is larger than the checkpoint's size. */
  'old-size-too-large': 400,
  /** The checkpoint carries no valid signature by a log key the witness trusts for its origin. */
  'no-trusted-signature': 403,
  /** No trusted log key covers the checkpoint's origin. */
  'unknown-origin': 404,
  /** `old` is not the size the witness last cosigned for this origin (the answer carries that size). */
  'old-size-mismatch': 409,
  /**
   * Same size as the cosigned checkpoint, different root: a split view. C2SP
   * tlog-witness (since C2SP/C2SP#280): "If the old size matches the checkpoint
   * size, the witness MUST check that the root hashes are also identical. If
   * they don't match, the witness MUST respond with a "422 Unprocessable
   * Entity" HTTP status code." (No size body: every 409 carries one, and this
   * is not one.)
   */
  'root-mismatch': 422,
  /** A checkpoint of size 0 whose root is not the empty tree's, SHA-256 of "" (C2SP tlog-witness: 422). */
  'bad-empty-root': 422,
  /** The consistency proof does not link the cosigned root to the new one, or is not empty from old size 0 or to the same size. */
  'bad-consistency-proof': 422,
  /** The origin used its rate budget (`originRate`): at most that many cosignings per window; retry after `retryAfter` seconds. */
  'rate-limited': 429,
} as const;

/** Why a witness refused. */
export type AddCheckpointCode = keyof typeof ADD_CHECKPOINT_CODES;

/** Outcome of {@link Witness.addCheckpoint}. */
export type AddCheckpointResult =
  | {
      readonly ok: true;
      readonly status: 200;
      /** The answer body: the witness's cosignature line(s). */
      readonly lines: string;
      readonly origin: string;
      readonly size: number;
      /** Cosignature time (POSIX seconds). */
      readonly time: number;
    }
  | { readonly ok: false; readonly status: 409; readonly code: 'old-size-mismatch'; readonly message: string; readonly size: number }
  | { readonly ok: false; readonly status: 429; readonly code: 'rate-limited'; readonly message: string; readonly retryAfter: number }
  | { readonly ok: false; readonly status: 400 | 403 | 404 | 422; readonly code: Exclude<AddCheckpointCode, 'old-size-mismatch' | 'rate-limited'>; readonly message: string };

/** Options of {@link createWitness}. */
export interface WitnessOptions {
  /** The witness's cosigning key. */
  readonly key: CosignerKey;
  /** Durable state (latest cosigned checkpoint per origin, trusted log keys). */
  readonly store: WitnessStore;
  /** POSIX seconds (default: the system clock). */
  readonly now?: () => number;
  /**
   * Called after the new state is persisted and before the answer is returned
   * (crash tests kill the process here). Default: nothing.
   */
  readonly afterPersist?: (origin: string, record: WitnessRecord) => void | Promise<void>;
  /**
   * Only logs whose origin IS the trusted key's name (C2SP tlog-checkpoint's
   * SHOULD; litewitness refuses any other): a Tally engine key then covers
   * its engine log (`<name>` = its origin) but no `<name>/<session id>`
   * origin. Default false (session origins covered too).
   */
  readonly originIsKeyName?: boolean;
  /**
   * A rate budget per origin: at most `checkpoints` cosignings in any
   * `windowSeconds` (by the `now` clock); a request beyond it is answered 429
   * (`rate-limited`) with the seconds until the budget frees, before any
   * consistency check, and changes nothing. Kept in this process's memory.
   * Default: none.
   */
  readonly originRate?: { readonly checkpoints: number; readonly windowSeconds: number };
}

/** A witness: cosigns checkpoints consistent with everything it cosigned before. */
export interface Witness {
  readonly name: string;
  /** The cosigner vkey graders pin. */
  readonly verifierKey: string;
  /** Trusts a log verifier key (Ed25519, `name+keyid+base64`). Throws `TALLY_WITNESS_LOG_KEY_INVALID`. */
  trustLogKey(vkey: string): Promise<void>;
  /** Handles one C2SP tlog-witness `add-checkpoint` body. Never throws for body content. */
  addCheckpoint(body: string): Promise<AddCheckpointResult>;
  /**
   * C2SP tlog-witness monitor retrieval: the latest checkpoint cosigned for
   * the origin whose SHA-256 is `originHash` (64 lowercase hex), as the log
   * signed it plus this witness's cosignature, or `undefined`. Origins are
   * found among the trusted keys' names and the origins cosigned by this
   * process (the store keeps no index by hash).
   */
  checkpointFor(originHash: string): Promise<string | undefined>;
}

/**
 * Whether a trusted log key covers an origin: a key named exactly like the
 * origin (a C2SP log), or an engine key whose Tally session origins are
 * `<key name>/<64 hex session id>`.
 */
export function logKeyCovers(keyName: string, origin: string, originIsKeyName = false): boolean {
  return origin === keyName || (!originIsKeyName && splitSessionOrigin(origin)?.engineName === keyName);
}

function refuse<C extends Exclude<AddCheckpointCode, 'old-size-mismatch' | 'rate-limited'>>(code: C, message: string): AddCheckpointResult {
  return { ok: false, status: ADD_CHECKPOINT_CODES[code], code, message } as AddCheckpointResult;
}

function conflict(size: number, message: string): AddCheckpointResult {
  return { ok: false, status: 409, code: 'old-size-mismatch', size, message };
}

/** The RFC 6962 root of the empty tree: SHA-256 of the empty string. */
const EMPTY_ROOT = createHash('sha256').digest();

/**
 * A witness (C2SP tlog-witness semantics), in process. `addCheckpoint`
 * checks, in this order: the body's shape (400); that a trusted log key covers
 * the origin (404; with `originIsKeyName`, only a key named as the origin);
 * a valid signature by such a key (403); old ≤ new (400); the origin's rate
 * budget (429, `originRate`);
 * old = the stored size (409 with the stored size); a size-0 checkpoint the
 * empty tree's root (422); equal sizes an empty proof and equal roots (422,
 * `root-mismatch`: C2SP tlog-witness since C2SP/C2SP#280), a first checkpoint
 * an empty proof, otherwise the RFC 6962 consistency proof from the stored
 * root (422). Then it cosigns
 * and persists with a compare-and-swap on the stored (size, root) — a
 * concurrent request that moved the state first makes this one a 409 — and
 * answers only after the swap is durable.
 *
 * @example
 * const w = createWitness({ key: cosignerKeyFrom(generateEngineKey('w.example')), store: new MemoryWitnessStore() });
 * await w.trustLogKey(engineKey.verifierKey);
 * const r = await w.addCheckpoint(`old 0\n\n${signedCheckpoint}`);
 */
export function createWitness(options: WitnessOptions): Witness {
  const { key, store } = options;
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const strict = options.originIsKeyName === true;
  const rate = options.originRate;
  if (rate !== undefined && (!Number.isSafeInteger(rate.checkpoints) || rate.checkpoints < 1 || !Number.isSafeInteger(rate.windowSeconds) || rate.windowSeconds < 1)) {
    throw new RangeError(`originRate must be positive integers, got ${JSON.stringify(rate)}`);
  }
  /** SHA-256 hex of each origin this process cosigned or trusts by name → the origin. */
  const byHash = new Map<string, string>();
  const hashOf = (origin: string): string => createHash('sha256').update(origin, 'utf8').digest('hex');
  /** Per origin, the times (POSIX seconds) of its cosignings in the current window, oldest first. */
  const spent = new Map<string, number[]>();
  /** Seconds until `origin` may be cosigned again, or 0. Forgets times that left the window. */
  const wait = (origin: string, t: number): number => {
    if (rate === undefined) return 0;
    const times = (spent.get(origin) ?? []).filter((x) => x > t - rate.windowSeconds);
    if (times.length === 0) spent.delete(origin);
    else spent.set(origin, times);
    return times.length < rate.checkpoints ? 0 : times[0]! + rate.windowSeconds - t;
  };
  let cached: { readonly list: string; readonly keys: readonly ParsedVerifierKey[] } | undefined;

  async function trusted(): Promise<readonly ParsedVerifierKey[]> {
    const list = await store.logKeys();
    const joined = list.join('\n');
    if (cached?.list !== joined) {
      cached = { list: joined, keys: list.flatMap((v) => { const p = parseVerifierKey(v); return p.ok ? [p.verifier] : []; }) };
    }
    return cached.keys;
  }

  return Object.freeze({
    name: key.name,
    verifierKey: key.verifierKey,

    async trustLogKey(vkey: string) {
      const p = parseVerifierKey(vkey);
      if (!p.ok) throw new TallyError('TALLY_WITNESS_LOG_KEY_INVALID', 'Not an Ed25519 log verifier key (name+keyid+base64).', { details: p.message });
      await store.addLogKey(p.verifier.verifierKey);
    },

    async checkpointFor(originHash: string): Promise<string | undefined> {
      if (typeof originHash !== 'string' || !/^[0-9a-f]{64}$/.test(originHash)) return undefined;
      for (const k of await trusted()) if (!byHash.has(hashOf(k.name))) byHash.set(hashOf(k.name), k.name);
      const origin = byHash.get(originHash);
      const rec = origin === undefined ? undefined : await store.latest(origin);
      if (rec === undefined) return undefined;
      const text = rec.signedCheckpoint.slice(0, rec.signedCheckpoint.indexOf('\n\n') + 1);
      return addSignatureLines(rec.signedCheckpoint, [cosignatureLine(text, key, rec.time)]);
    },

    async addCheckpoint(body: string): Promise<AddCheckpointResult> {
      const parsed = parseConsistencyProof(body);
      if (!parsed.ok) return refuse('malformed-request', parsed.message);
      const { oldSize, proof, signedCheckpoint } = parsed.consistencyProof;
      if (proof.length > MAX_ADD_CHECKPOINT_PROOF_LINES) return refuse('malformed-request', `more than ${MAX_ADD_CHECKPOINT_PROOF_LINES} proof lines`);
      const origin = signedCheckpoint.slice(0, signedCheckpoint.indexOf('\n'));
      const keys = (await trusted()).filter((k) => logKeyCovers(k.name, origin, strict));
      if (keys.length === 0) return refuse('unknown-origin', `no trusted log key for origin ${JSON.stringify(origin)}`);
      const opened = openNote(signedCheckpoint, keys);
      if (!opened.ok) {
        return opened.code === 'no-pinned-signature' || opened.code === 'bad-signature' || opened.code === 'ambiguous-verifier'
          ? refuse('no-trusted-signature', opened.message)
          : refuse('malformed-request', opened.message);
      }
      const cp = parseCheckpoint(opened.text);
      if (!cp.ok) return refuse('malformed-request', cp.message);
      const { size, root } = cp.checkpoint;
      if (oldSize > size) return refuse('old-size-too-large', `old size ${oldSize} is larger than the checkpoint size ${size}`);
      const retryAfter = wait(origin, now());
      if (retryAfter > 0) return { ok: false, status: 429, code: 'rate-limited', retryAfter, message: `origin ${origin} used its budget of ${rate!.checkpoints} cosignings per ${rate!.windowSeconds} s; retry in ${retryAfter} s` };

      const stored = await store.latest(origin);
      const storedSize = stored?.size ?? 0;
      if (oldSize !== storedSize) return conflict(storedSize, `old size ${oldSize} is not the cosigned size ${storedSize}`);
      if (size === 0 && !sameRoot(EMPTY_ROOT, root)) return refuse('bad-empty-root', 'a checkpoint of size 0 must have the root of the empty tree (SHA-256 of the empty string)');
      if (stored === undefined || oldSize === 0 || oldSize === size) {
        if (proof.length !== 0) return refuse('bad-consistency-proof', `the proof must be empty from size ${oldSize} to ${size}`);
        if (stored !== undefined && oldSize === size && !sameRoot(stored.root, root)) return refuse('root-mismatch', `size ${size} was cosigned with a different root`);
      } else {
        const v = verifyConsistency(receiptHasher, oldSize, size, proof, stored.root, root);
        if (!v.ok) return refuse('bad-consistency-proof', v.message);
      }

      const time = now();
      const lines = cosignatureLine(opened.text, key, time);
      const record: WitnessRecord = { size, root, signedCheckpoint, time };
      const swapped = await store.compareAndSwap(origin, stored === undefined ? undefined : { size: stored.size, root: stored.root }, record);
      if (!swapped) {
        // Another request moved this origin between our read and our swap: nothing was cosigned here.
        const now2 = await store.latest(origin);
        return conflict(now2?.size ?? 0, `the cosigned state of ${origin} changed while this request was checked`);
      }
      if (rate !== undefined) spent.set(origin, [...(spent.get(origin) ?? []), time]);
      byHash.set(hashOf(origin), origin);
      if (options.afterPersist) await options.afterPersist(origin, record);
      return { ok: true, status: 200, lines, origin, size, time };
    },
  });
}

