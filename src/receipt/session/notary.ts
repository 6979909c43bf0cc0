import { TallyError, toHex } from '../../protocol/index.js';
import type { Engine, Receipt, Rejection } from '../../session/index.js';
import { describeValue, entryHashHex, sessionCheckpointText } from '../bytes.js';
import type { EngineKey } from '../keys/engineKey.js';
import { checkpointOrigin } from '../checkpoint/origin.js';
import { signNote } from '../note/sign.js';
import { formatTurnReceipt } from '../proof/turn-receipt.js';
import { formatConsistencyProof } from '../proof/consistency.js';
import { SigningLog } from '../signing/log.js';
import type { PackedMerkleTree } from './packed-tree.js';
import { openSessionCheckpoint } from './open-checkpoint.js';
import { SessionTrees } from './trees.js';
import { ATTR, SPAN, inSpanSync } from '../../telemetry/index.js';

/** What the notary needs of an engine: its store, and `finalize` for the seal. */
export type NotaryEngine = Pick<Engine, 'store' | 'finalize'>;

/** Options of {@link createNotary}. */
export interface NotaryOptions {
  /** The engine key; its name is the engine name in every checkpoint origin. */
  readonly key: EngineKey;
  /** Tree cache (default: a new one per notary). Share one between notaries of one process to build each tree once. */
  readonly trees?: SessionTrees;
  /** The clock of the signing log's `signedAt` (epoch ms; default `Date.now`). */
  readonly now?: () => number;
}

/** A checkpoint the notary signed. */
export interface IssuedCheckpoint {
  readonly sessionId: string;
  readonly origin: string;
  readonly size: number;
  /** RFC 6962 root over the first `size` entries (hex). */
  readonly root: string;
  /** The C2SP signed note (tlog-checkpoint text + the engine's signature line). */
  readonly signedCheckpoint: string;
}

/** Every reason a notary refuses a request (nothing is signed). */
export const NOTARY_CODES = ['unknown-session', 'size-out-of-range', 'index-out-of-range', 'checkpoint-mismatch'] as const;
/** Why a notary refused. */
export type NotaryCode = (typeof NOTARY_CODES)[number];
/** A refused notary request. */
export interface NotaryRejection {
  readonly ok: false;
  readonly code: NotaryCode;
  readonly message: string;
}

/** Result of {@link Notary.issueCheckpoint}. */
export type IssueCheckpointResult = ({ readonly ok: true } & IssuedCheckpoint) | NotaryRejection;

/** Result of {@link Notary.sealWithReceipt}: the engine's receipt and the signed checkpoint over every entry. */
export type SealWithReceiptResult =
  | { readonly ok: true; readonly receipt: Receipt; readonly duplicate: boolean; readonly checkpoint: IssuedCheckpoint; readonly signedCheckpoint: string }
  | Rejection;

/** Result of {@link Notary.inclusionProof}. */
export type InclusionProofResult =
  | { readonly ok: true; readonly index: number; readonly size: number; readonly leafHash: string; readonly root: string; readonly proof: Uint8Array[] }
  | NotaryRejection;

/** Result of {@link Notary.consistencyProof}. */
export type ConsistencyProofResult =
  | { readonly ok: true; readonly size1: number; readonly size2: number; readonly root1: string; readonly root2: string; readonly proof: Uint8Array[] }
  | NotaryRejection;

/** Result of {@link Notary.turnReceipt}. */
export type TurnReceiptResult =
  | { readonly ok: true; readonly index: number; readonly size: number; readonly entryHash: string; readonly text: string; readonly checkpoint: IssuedCheckpoint }
  | NotaryRejection;

/** Options of {@link Notary.turnReceipt}. */
export interface TurnReceiptOptions {
  /** Prove against a checkpoint of this size (default: the session's current size); a fresh checkpoint is signed. */
  readonly size?: number;
  /** Prove against this checkpoint (signed by this notary's key, possibly cosigned) instead of signing a new one. */
  readonly signedCheckpoint?: string;
}

/** Signs checkpoints of an engine's sessions and proves entries against them. See {@link createNotary}. */
export interface Notary {
  /** The engine name (the key's note name). */
  readonly name: string;
  /** The C2SP verifier key graders pin: `name+keyid+base64`. */
  readonly verifierKey: string;
  /**
   * The latest checkpoint the engine key signed for the session, as its
   * signing log records it (re-signed: Ed25519 is deterministic, the same
   * bytes), after checking the store's tree still has that root; signs
   * nothing new. `undefined` for an unknown session or one never signed.
   */
  latestCheckpoint(engine: NotaryEngine, sessionId: string): Promise<IssuedCheckpoint | undefined>;
  /** Signs a C2SP checkpoint over the first `size` entries (default: all so far). */
  issueCheckpoint(engine: NotaryEngine, sessionId: string, size?: number): Promise<IssueCheckpointResult>;
  /** Finalizes the session and signs the checkpoint over every entry, the seal included: the receipt. */
  sealWithReceipt(engine: NotaryEngine, sessionId: string, artifacts?: unknown): Promise<SealWithReceiptResult>;
  /** RFC 6962 inclusion proof of entry `index` in the tree of the first `size` entries (default: all). */
  inclusionProof(engine: NotaryEngine, sessionId: string, index: number, size?: number): Promise<InclusionProofResult>;
  /** RFC 9162 consistency proof from size `size1` to `size2` (default: all). */
  consistencyProof(engine: NotaryEngine, sessionId: string, size1: number, size2?: number): Promise<ConsistencyProofResult>;
  /** The consistency proof as text (tlog-witness `add-checkpoint` body shape) with a fresh checkpoint at `size2`. */
  consistencyProofText(engine: NotaryEngine, sessionId: string, size1: number, size2?: number): Promise<({ readonly ok: true; readonly text: string } & IssuedCheckpoint) | NotaryRejection>;
  /** A single-turn receipt (C2SP tlog-proof with the entry's bytes) for entry `index`. */
  turnReceipt(engine: NotaryEngine, sessionId: string, index: number, options?: TurnReceiptOptions): Promise<TurnReceiptResult>;
}

/** Catch-ups of one signature while other signers keep signing past the tree (each re-reads the store). */
const MAX_CATCH_UPS = 16;

function refuse(code: NotaryCode, message: string): NotaryRejection {
  return { ok: false, code, message };
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/**
 * The engine's notary: signs C2SP tlog-checkpoints of sessions with the
 * engine key and serves proofs against them. It signs only what the engine's
 * store holds, and only through the store's signing log ({@link SigningLog}):
 * every checkpoint is recorded (durably) before it is signed, and one that
 * would equivocate or be inconsistent with an earlier signed one is refused
 * with a `SigningRefusedError` (`TALLY_SIGN_EQUIVOCATION`,
 * `TALLY_SIGN_INCONSISTENT`) — thrown, like a corrupt store, since neither
 * can happen while the store is append-only. Checkpoints and proofs come from
 * a per-session {@link SessionTrees} tree built once from the stored entries
 * (every hash recomputed from the stored bytes) and extended as the session
 * grows, so each proof is O(log n) after the first call.
 *
 * @example
 * const notary = createNotary({ key: await loadEngineKey() });
 * const sealed = await notary.sealWithReceipt(engine, sessionId);
 * if (sealed.ok) writeFileSync('day.checkpoint', sealed.signedCheckpoint);
 * const one = await notary.turnReceipt(engine, sessionId, 4);
 */
export function createNotary(options: NotaryOptions): Notary {
  const key = options.key;
  if (!key || typeof key.sign !== 'function' || typeof key.verifierKey !== 'string') {
    throw new TallyError('TALLY_NOTARY_KEY_INVALID', 'createNotary needs an engine key (generateEngineKey, loadEngineKey, parsePrivateKey).');
  }
  const trees = options.trees ?? new SessionTrees();

  async function treeOf(engine: NotaryEngine, sessionId: string) {
    if (typeof sessionId !== 'string') return undefined;
    return trees.sync(engine.store, sessionId);
  }

  /** Reads of the tree (roots, proofs, leaf hashes), with the chunks below its floor loaded from the store as needed. */
  function read<T>(engine: NotaryEngine, sessionId: string, tree: PackedMerkleTree, fn: () => T | Promise<T>): Promise<T> {
    return trees.read(engine.store, sessionId, tree, fn);
  }

  /** Records the checkpoint of the first `size` entries of the store's `tree` in the signing log, then (only then) signs it. */
  async function sign(engine: NotaryEngine, sessionId: string, tree: PackedMerkleTree, size: number, sealed?: boolean): Promise<IssuedCheckpoint> {
    // The seal's checkpoint is the one over every entry of a sealed session (its finalize is the last entry): the engine log marks it.
    let seal = sealed;
    if (seal === undefined) {
      const head = size === tree.size ? await engine.store.loadHead(sessionId) : undefined;
      seal = head?.phase === 'sealed' && head.size === size;
    }
    const root = await read(engine, sessionId, tree, () => tree.root(size));
    const text = sessionCheckpointText(key.name, sessionId, size, root);
    const origin = text.slice(0, text.indexOf('\n'));
    const log = new SigningLog(engine.store, options.now === undefined ? {} : { now: options.now });
    let current = tree;
    for (let round = 1; ; round++) {
      // A chunk the consistency check needs is thrown before the log writes anything, so the record may run again.
      const t = current;
      // The size the log checks against, fixed for this round (the cached tree may grow meanwhile; sizes below stay as they are).
      const had = t.size;
      const view = { size: had, root: (n: number) => t.root(n), consistencyProof: (a: number, b: number) => t.consistencyProof(a, b) };
      const logged = await read(engine, sessionId, t, () => log.record({ origin, size, root, session: { seal } }, view));
      if (logged.ok) break;
      // Another signer on this store (a second server, `tally checkpoint`) signed a size this tree has not read yet:
      // catch up from the store and check again. Refused only when the store itself holds less than was signed.
      if (logged.code === 'TALLY_SIGN_INCONSISTENT' && logged.recorded.size > had) {
        const fresh = await treeOf(engine, sessionId); // the cached tree extended in place, or a new one if it was evicted
        if (fresh !== undefined && fresh.size > had) {
          if (round >= MAX_CATCH_UPS) throw new TallyError('TALLY_SIGN_CONTENDED', `Other signers kept signing ${origin} past what this engine read; nothing was signed. Retry.`);
          current = fresh;
          continue;
        }
      }
      throw SigningLog.refusalError(logged);
    }
    return { sessionId, origin, size, root: toHex(root), signedCheckpoint: inSpanSync(SPAN.checkpoint, { [ATTR.session]: sessionId }, () => signNote(text, [key])) };
  }

  const notary: Notary = {
    name: key.name,
    verifierKey: key.verifierKey,

    async latestCheckpoint(engine, sessionId) {
      const tree = await treeOf(engine, sessionId);
      if (!tree) return undefined;
      const origin = checkpointOrigin(key.name, sessionId);
      const last = await new SigningLog(engine.store).latest(origin);
      if (!last) return undefined;
      const root = last.size >= 1 && last.size <= tree.size ? await read(engine, sessionId, tree, () => tree.root(last.size)) : undefined;
      if (root === undefined || toHex(root) !== last.root) {
        throw new TallyError('TALLY_STORE_CORRUPT', 'The store no longer holds the tree of the session checkpoint the engine signed last.', { details: `${origin} signed size ${last.size} root ${last.root}, store has ${tree.size} entries` });
      }
      const text = sessionCheckpointText(key.name, sessionId, last.size, root);
      return { sessionId, origin, size: last.size, root: last.root, signedCheckpoint: signNote(text, [key]) };
    },

    async issueCheckpoint(engine, sessionId, size) {
      const tree = await treeOf(engine, sessionId);
      if (!tree) return refuse('unknown-session', `no session ${describeValue(sessionId)}`);
      const n = size === undefined ? tree.size : size;
      if (!isCount(n) || n < 1 || n > tree.size) return refuse('size-out-of-range', `size must be 1 to ${tree.size}, got ${describeValue(size)}`);
      return { ok: true, ...(await sign(engine, sessionId, tree, n)) };
    },

    async sealWithReceipt(engine, sessionId, artifacts) {
      const fin = await engine.finalize(sessionId, artifacts);
      if (!fin.ok) return fin;
      const { receipt } = fin;
      const tree = await treeOf(engine, receipt.sessionId);
      if (!tree || tree.size < receipt.size) throw new TallyError('TALLY_RECEIPT_STORE_BEHIND', 'The store does not hold the sealed entries the engine reported.', { details: receipt.sessionId });
      const treeRoot = toHex(await read(engine, receipt.sessionId, tree, () => tree.root(receipt.size)));
      if (treeRoot !== receipt.receiptRoot) {
        throw new TallyError('TALLY_RECEIPT_ROOT_MISMATCH', 'The tree rebuilt from the stored entries disagrees with the engine receipt; nothing was signed.', {
          details: `tree ${treeRoot}, receipt ${receipt.receiptRoot}`,
        });
      }
      const cp = await sign(engine, receipt.sessionId, tree, receipt.size, true);
      return { ok: true, receipt, duplicate: fin.duplicate, checkpoint: cp, signedCheckpoint: cp.signedCheckpoint };
    },

    async inclusionProof(engine, sessionId, index, size) {
      const tree = await treeOf(engine, sessionId);
      if (!tree) return refuse('unknown-session', `no session ${describeValue(sessionId)}`);
      const n = size === undefined ? tree.size : size;
      if (!isCount(n) || n < 1 || n > tree.size) return refuse('size-out-of-range', `size must be 1 to ${tree.size}, got ${describeValue(size)}`);
      if (!isCount(index) || index >= n) return refuse('index-out-of-range', `index must be 0 to ${n - 1}, got ${describeValue(index)}`);
      return { ok: true, index, size: n, ...(await read(engine, sessionId, tree, () => ({ leafHash: toHex(tree.leafHash(index)), root: toHex(tree.root(n)), proof: tree.inclusionProof(index, n) }))) };
    },

    async consistencyProof(engine, sessionId, size1, size2) {
      const tree = await treeOf(engine, sessionId);
      if (!tree) return refuse('unknown-session', `no session ${describeValue(sessionId)}`);
      const n2 = size2 === undefined ? tree.size : size2;
      if (!isCount(n2) || n2 < 1 || n2 > tree.size) return refuse('size-out-of-range', `size2 must be 1 to ${tree.size}, got ${describeValue(size2)}`);
      if (!isCount(size1) || size1 < 1 || size1 > n2) return refuse('size-out-of-range', `size1 must be 1 to ${n2}, got ${describeValue(size1)}`);
      return { ok: true, size1, size2: n2, ...(await read(engine, sessionId, tree, () => ({ root1: toHex(tree.root(size1)), root2: toHex(tree.root(n2)), proof: tree.consistencyProof(size1, n2) }))) };
    },

    async consistencyProofText(engine, sessionId, size1, size2) {
      const p = await notary.consistencyProof(engine, sessionId, size1, size2);
      if (!p.ok) return p;
      const tree = await treeOf(engine, sessionId);
      const cp = await sign(engine, sessionId, tree!, p.size2);
      return { ok: true, ...cp, text: formatConsistencyProof({ oldSize: p.size1, proof: p.proof, signedCheckpoint: cp.signedCheckpoint }) };
    },

    async turnReceipt(engine, sessionId, index, opts = {}) {
      const tree = await treeOf(engine, sessionId);
      if (!tree) return refuse('unknown-session', `no session ${describeValue(sessionId)}`);
      let cp: IssuedCheckpoint;
      if (opts.signedCheckpoint !== undefined) {
        const opened = openSessionCheckpoint(opts.signedCheckpoint, [key], { sessionId });
        if (!opened.ok) return refuse('checkpoint-mismatch', `the given checkpoint does not open with this notary's key: ${opened.message}`);
        const c = opened.checkpoint;
        if (c.size < 1 || c.size > tree.size || toHex(await read(engine, sessionId, tree, () => tree.root(c.size))) !== c.root) {
          return refuse('checkpoint-mismatch', `the given checkpoint (size ${c.size}) is not a state of this session's tree`);
        }
        cp = { sessionId, origin: c.origin, size: c.size, root: c.root, signedCheckpoint: c.signedCheckpoint };
      } else {
        const n = opts.size === undefined ? tree.size : opts.size;
        if (!isCount(n) || n < 1 || n > tree.size) return refuse('size-out-of-range', `size must be 1 to ${tree.size}, got ${describeValue(opts.size)}`);
        cp = await sign(engine, sessionId, tree, n);
      }
      if (!isCount(index) || index >= cp.size) return refuse('index-out-of-range', `index must be 0 to ${cp.size - 1}, got ${describeValue(index)}`);
      const rows = await engine.store.readRange(sessionId, index, index + 1);
      const row = rows[0];
      const { leaf, proof } = await read(engine, sessionId, tree, () => ({ leaf: toHex(tree.leafHash(index)), proof: tree.inclusionProof(index, cp.size) }));
      if (!row || row.index !== index || entryHashHex(row.bytes) !== leaf) {
        throw new TallyError('TALLY_STORE_CORRUPT', 'The stored entry disagrees with the session tree.', { details: `${sessionId} entry ${index}` });
      }
      const text = formatTurnReceipt({ index, proof, signedCheckpoint: cp.signedCheckpoint, entryBytes: row.bytes });
      return { ok: true, index, size: cp.size, entryHash: leaf, text, checkpoint: cp };
    },
  };
  return Object.freeze(notary);
}
