/**
 * What an operator runs after a failover (`tally operator
 * acknowledge-failover`): check the store against everything the engine key
 * signed and witnesses acknowledged, show what was lost, and — only when
 * asked — record the acknowledgement that lets signing go on
 * (./continuity.ts). Every signed checkpoint a recorded refusal names is
 * written back into the signing log first: one whose entries the store lost
 * can then never be signed with another root (its session stays refused,
 * `TALLY_SIGN_INCONSISTENT`), one it still holds is again the row its signer
 * remembers; every other session signs again.
 */
import { TallyError, toHex } from '../../protocol/index.js';
import { hasContinuity, hasEngineLog, type ContinuityState, type ContinuityStore, type CosignatureStore, type SigningLogStore, type TranscriptStore } from '../../store/types.js';
import { SessionTrees } from '../session/trees.js';
import { judgeContinuity, type ContinuityVerdict } from './continuity.js';

/** One signed (or witnessed) checkpoint and whether the store holds it. */
export interface HeldCheck {
  readonly origin: string;
  readonly size: number;
  /** The signed root (absent for a witness size). */
  readonly root?: string;
  /** Who acknowledged it: the signing log, a recorded refusal (a lost row), or a witness (by name). */
  readonly by: 'signing-log' | 'refusal' | `witness ${string}`;
  /** `held`, `short` (the store has fewer entries), `other-root` (another root at that size), `size-only` (the engine log: size checked, root not). */
  readonly state: 'held' | 'short' | 'other-root' | 'size-only';
  /** The store's entries of that origin. */
  readonly storeSize: number;
}

/** What {@link checkFailover} found. */
export interface FailoverReport {
  readonly state: ContinuityState;
  /** The continuity rule's verdict for a signer with no memory (a fresh process). */
  readonly verdict: ContinuityVerdict;
  readonly checks: readonly HeldCheck[];
  /** The checks the store fails (`short`, `other-root`). */
  readonly lost: readonly HeldCheck[];
}

type FailoverStore = TranscriptStore & SigningLogStore & ContinuityStore & Partial<CosignatureStore>;

const SESSION_ID = /\/([0-9a-f]{64})$/;

/**
 * Checks every signing-log head, every lost row named by a recorded refusal
 * and (for each name in `witnesses`) the size each witness was recorded to
 * have cosigned, against the store's trees.
 */
export async function checkFailover(store: TranscriptStore, witnesses: readonly string[] = []): Promise<FailoverReport> {
  if (!hasContinuity(store) || typeof (store as Partial<ContinuityStore>).signingLogHeads !== 'function') {
    throw new TallyError('TALLY_STORE_MISUSE', `The store ${store.name} keeps no continuity record (SQLite migration 7, PostgreSQL 11); there is nothing to acknowledge.`);
  }
  const s = store as FailoverStore;
  const state = await s.continuityState();
  const trees = new SessionTrees();
  const logSize = hasEngineLog(store) ? await store.engineLogSize() : 0;
  const checks: HeldCheck[] = [];
  const check = async (origin: string, size: number, root: string | undefined, by: HeldCheck['by']): Promise<void> => {
    const sid = SESSION_ID.exec(origin)?.[1];
    if (sid === undefined) {
      checks.push({ origin, size, ...(root === undefined ? {} : { root }), by, state: size <= logSize ? 'size-only' : 'short', storeSize: logSize });
      return;
    }
    const tree = await trees.sync(store, sid);
    const n = tree?.size ?? 0;
    let st: HeldCheck['state'] = 'held';
    if (tree === undefined || n < size) st = 'short';
    else if (root !== undefined && toHex(await trees.read(store, sid, tree, () => tree.root(size))) !== root) st = 'other-root';
    checks.push({ origin, size, ...(root === undefined ? {} : { root }), by, state: st, storeSize: n });
  };
  const heads = await s.signingLogHeads();
  for (const h of heads) await check(h.origin, h.size, h.root, 'signing-log');
  for (const e of state.events) if (e.kind === 'refused' && e.lost !== undefined) await check(e.lost.origin, e.lost.size, e.lost.root, 'refusal');
  if (witnesses.length > 0 && typeof s.witnessSize === 'function') {
    for (const h of heads) {
      for (const w of witnesses) {
        const size = await s.witnessSize(w, h.origin);
        if (size !== undefined && size > 0) await check(h.origin, size, undefined, `witness ${w}`);
      }
    }
  }
  return { state, verdict: judgeContinuity(state), checks, lost: checks.filter((c) => c.state === 'short' || c.state === 'other-root') };
}

/** What {@link acknowledgeFailover} wrote. */
export interface AcknowledgeResult {
  /** Signed checkpoints named by a refusal, written back into the signing log (or already there again: a duplicate). */
  readonly restored: readonly HeldCheck[];
  /** Lost signed checkpoints that could not be written back: another root is already signed at that size (an equivocation happened). */
  readonly equivocated: readonly HeldCheck[];
}

/**
 * Records the operator's acknowledgement of the store's current system and
 * timeline, after writing back every lost signed row of `report` (see the
 * module comment). `reason` is the operator's words, kept in the record.
 */
export async function acknowledgeFailover(store: TranscriptStore, report: FailoverReport, reason: string, now: () => number = Date.now): Promise<AcknowledgeResult> {
  const s = store as FailoverStore;
  const restored: HeldCheck[] = [];
  const equivocated: HeldCheck[] = [];
  // Every signed checkpoint a refusal named goes back into the signing log, held or not: a held one is then the row its
  // signer still remembers (so that signer signs on), a lost one bars its size from another root.
  for (const c of report.checks) {
    if (c.by !== 'refusal' || c.root === undefined) continue;
    for (let attempt = 0; ; attempt++) {
      const latest = await s.latestCheckpoint(c.origin);
      const out = await s.recordCheckpoint({ origin: c.origin, size: c.size, root: c.root, signedAt: now() }, latest && { size: latest.size, root: latest.root });
      if (out.ok) {
        restored.push(c);
        break;
      }
      if (out.reason === 'equivocation') {
        equivocated.push(c);
        break;
      }
      if (attempt >= 16) throw new TallyError('TALLY_SIGN_CONTENDED', `Other signers kept recording ${c.origin}; nothing was acknowledged. Retry.`);
    }
  }
  const lost = report.lost.length === 0 ? 'nothing lost' : `lost: ${report.lost.map((c) => `${c.origin} size ${c.size} (${c.by}, store ${c.storeSize})`).join('; ')}`;
  const state = await s.continuityState();
  await s.recordContinuityEvent({ kind: 'acknowledged', position: state.current, at: now(), detail: `${reason} — ${report.checks.length} checked, ${lost}` });
  return { restored, equivocated };
}
