import type { Notary, NotaryEngine, IssuedCheckpoint, SealWithReceiptResult } from '../receipt/session/notary.js';
import { TallyError } from '../protocol/index.js';
import type { CosignatureStore } from '../store/types.js';
import { parseVerifierKey } from '../receipt/note/verifierKey.js';
import { formatConsistencyProof } from '../receipt/proof/consistency.js';
import { addSignatureLines, verifyCosignatures } from './cosignature/cosign.js';
import type { CosignerVerifier } from './cosignature/key.js';
import { submitCheckpoint, type SubmitResult } from './client.js';
import { checkWitnessPolicy } from './policy/check.js';
import { checkpointOrigin } from '../receipt/checkpoint/origin.js';
import { isDigestHex } from '../protocol/index.js';
import { WitnessWatch, witnessConflictError, type ConflictListener, type WitnessConflict } from './conflict.js';
import type { WitnessConflictReason } from '../telemetry/index.js';
import type { WitnessPolicy } from './policy/types.js';

/** A witness the engine submits to. */
export interface EngineWitness {
  /** Submission prefix (`/add-checkpoint` is appended). */
  readonly url: string;
  readonly verifier: CosignerVerifier;
}

/** What one witness did with one checkpoint. */
export interface WitnessOutcome {
  readonly witness: string;
  readonly status: 'cosigned' | 'conflict' | 'refused' | 'unreachable' | 'bad-cosignature';
  readonly message?: string;
}

/** The cosigned checkpoint and who cosigned it. */
export interface CosignReport {
  /** The checkpoint with every valid cosignature collected so far appended. */
  readonly signedCheckpoint: string;
  readonly outcomes: readonly WitnessOutcome[];
  /** Names of the witnesses whose cosignature it carries. */
  readonly cosignedBy: readonly string[];
  /** Whether the policy's quorum is met (`undefined` without a policy). */
  readonly quorum?: boolean;
}

/** Options of {@link createWitnessedNotary}. */
export interface WitnessedNotaryOptions {
  /** The engine's notary (its key signs; this layer only adds cosignatures). */
  readonly notary: Notary;
  readonly witnesses: readonly EngineWitness[];
  /** The quorum to report against (graders enforce it; the engine never refuses to sign). */
  readonly policy?: WitnessPolicy;
  /** Per-witness time limit of one round of submissions (default 3000 ms). */
  readonly timeoutMs?: number;
  /** Told of every witness answer that contradicts the store (`tally serve` logs it at error level). */
  readonly onConflict?: ConflictListener;
}

/** A notary whose checkpoints carry witness cosignatures. */
export interface WitnessedNotary extends Notary {
  /** Submits a checkpoint this notary signed to every witness (again); collects and caches cosignatures. */
  cosign(engine: NotaryEngine, checkpoint: IssuedCheckpoint): Promise<CosignReport>;
  /** The last report for a session's checkpoint of `size`, if one was made. */
  report(origin: string, size: number): CosignReport | undefined;
  /** Seals; the result's checkpoint carries the cosignatures and `witnesses` records who cosigned. */
  sealWithReceipt(engine: NotaryEngine, sessionId: string, artifacts?: unknown): Promise<WitnessedSealResult>;
  /** The origins this notary refuses to sign because a witness holds a history the store lost (readiness fails while any). */
  conflicts(): readonly WitnessConflict[];
}

/** {@link WitnessedNotary.sealWithReceipt}'s result: the notary's, plus the witnesses' report. */
export type WitnessedSealResult = (Extract<SealWithReceiptResult, { ok: true }> & { readonly witnesses: CosignReport }) | Extract<SealWithReceiptResult, { ok: false }>;

/**
 * Wraps an engine's notary so that every checkpoint it signs — on seal, on
 * `issueCheckpoint`, for turn receipts and consistency proofs — is submitted
 * to the configured witnesses (C2SP tlog-witness), with a consistency proof
 * from the size each witness last cosigned (learned from its 409 answer), and
 * served with the cosignatures collected. Witnesses are asked in parallel,
 * each bounded by `timeoutMs`; a down, slow or refusing witness only means a
 * missing cosignature (recorded in the report), never a failed seal, and the
 * session's appends never wait for it (they do not pass through the notary).
 * `cosign` re-asks later. Cosignatures are verified before they are attached.
 * The one refusal is a witness answering that it holds a history the store
 * lost (conflict.ts): that checkpoint is not served and nothing more is
 * signed for its origin (`TALLY_SIGN_WITNESS_CONFLICT`, thrown).
 *
 * This is the narrow hook the engine uses until the durable signing log
 * lands: it sits on top of `Notary`, so whatever signs the checkpoint, only
 * checkpoints the notary produced are submitted.
 *
 * @example
 * const notary = createWitnessedNotary({ notary: createNotary({ key }), witnesses: [{ url, verifier }], policy });
 * const sealed = await notary.sealWithReceipt(engine, sid);  // sealed.signedCheckpoint carries the cosignatures
 */
export function createWitnessedNotary(options: WitnessedNotaryOptions): WitnessedNotary {
  const { notary, witnesses } = options;
  const timeoutMs = options.timeoutMs ?? 3000;
  const known = new Map<string, number>(); // url + origin -> size the witness last cosigned
  const lines = new Map<string, Set<string>>(); // origin + size + root -> cosignature lines
  const reports = new Map<string, CosignReport>();
  const parsedKey = parseVerifierKey(notary.verifierKey);
  const notaryVerifier = parsedKey.ok ? parsedKey.verifier : undefined;
  const watch = new WitnessWatch();
  if (options.onConflict) watch.onConflict(options.onConflict);

  const storeSize = async (engine: NotaryEngine, sessionId: string): Promise<number> => (await engine.store.loadHead(sessionId))?.size ?? 0;

  function conflict(witness: string, origin: string, reason: WitnessConflictReason, witnessSize: number, have: number, message: string): WitnessOutcome {
    watch.conflict({ witness, origin, reason, witnessSize, storeSize: have, message });
    return { witness, status: 'conflict', message: `${reason}: ${message}` };
  }

  /**
   * Before anything is signed for a session: no witness may hold what the
   * store lacks — a size beyond its tree, or a root at a size it holds that is
   * not its own. Refused (thrown) otherwise, and for good once seen.
   */
  async function guard(engine: NotaryEngine, sessionId: string): Promise<void> {
    if (typeof sessionId !== 'string' || !isDigestHex(sessionId)) return; // the notary refuses it as an unknown session
    const origin = checkpointOrigin(notary.name, sessionId);
    const barred = watch.conflictOf(origin);
    if (barred) throw witnessConflictError(barred);
    const held = watch.heldFor(origin);
    if (held.length === 0) return;
    const have = await storeSize(engine, sessionId);
    for (const h of held) {
      if (h.size > have) conflict(h.witness, origin, 'ahead', h.size, have, `the witness cosigned size ${h.size}; the store holds ${have} entries`);
      else if (h.root !== undefined && h.size > 0) {
        const p = await notary.consistencyProof(engine, sessionId, h.size, h.size);
        if (p.ok && p.root1 !== h.root) conflict(h.witness, origin, 'root-mismatch', h.size, have, `the witness cosigned size ${h.size} with root ${h.root}; the store's root there is ${p.root1}`);
      }
    }
    const now = watch.conflictOf(origin);
    if (now) throw witnessConflictError(now);
  }

  async function proofFrom(engine: NotaryEngine, cp: IssuedCheckpoint, old: number): Promise<string | undefined> {
    if (old === 0 || old === cp.size) return formatConsistencyProof({ oldSize: old, proof: [], signedCheckpoint: cp.signedCheckpoint });
    if (old > cp.size) return undefined;
    const p = await notary.consistencyProof(engine, cp.sessionId, old, cp.size);
    return p.ok ? formatConsistencyProof({ oldSize: old, proof: p.proof, signedCheckpoint: cp.signedCheckpoint }) : undefined;
  }

  async function ask(engine: NotaryEngine, cp: IssuedCheckpoint, w: EngineWitness): Promise<{ outcome: WitnessOutcome; lines: readonly string[] }> {
    const k = `${w.url}\n${cp.origin}`;
    const name = w.verifier.name;
    const durable = cosignatureStoreOf(engine);
    if (!known.has(k) && durable) {
      const stored = await durable.witnessSize(name, cp.origin);
      if (stored !== undefined) known.set(k, stored);
    }
    const learn = async (size: number): Promise<void> => {
      known.set(k, size);
      await durable?.recordWitnessSize(name, cp.origin, size);
    };
    let r: SubmitResult | undefined;
    let old = known.get(k) ?? 0;
    for (let attempt = 0; attempt < 2; attempt++) {
      const body = await proofFrom(engine, cp, old);
      if (body === undefined) return { outcome: { witness: name, status: 'conflict', message: `the witness holds size ${old}, above ${cp.size}` }, lines: [] };
      r = await submitCheckpoint(w.url, body, { timeoutMs });
      // 422 (C2SP tlog-witness): to old = size, "the root hashes are [not] also identical" — the witness cosigned
      // another root at this size; to a smaller old, the witness's cosigned root at `old` is not on the store's tree.
      if (r.kind === 'refused' && r.status === 422) {
        if (old === cp.size && old > 0) {
          return { outcome: conflict(name, cp.origin, 'root-mismatch', old, await storeSize(engine, cp.sessionId), `the witness answered 422 to size ${old} with root ${cp.root}: it cosigned another root there (${r.message})`), lines: [] };
        }
        return { outcome: conflict(name, cp.origin, 'bad-consistency-proof', old, await storeSize(engine, cp.sessionId), `the witness refused the proof from its size ${old} to ${cp.size}: ${r.message}`), lines: [] };
      }
      // Witnesses written before C2SP/C2SP#280 answered a second root at the size they hold with 409, sized or not.
      // A 409 without a size (a witness that does not send text/x.tlog.size): at the size it is known to hold, as large as
      // the checkpoint, it can only mean another root there — the same conflict as a sized 409 naming that size.
      if (r.kind === 'conflict-unsized') {
        if (old === cp.size && old > 0) {
          return { outcome: conflict(name, cp.origin, 'root-mismatch', old, await storeSize(engine, cp.sessionId), `the witness answered 409 (no size) to size ${old} with root ${cp.root}: it cosigned another root there`), lines: [] };
        }
        return { outcome: { witness: name, status: 'conflict', message: `the witness answered 409 without its size (from old size ${old})${r.message === '' ? '' : `: ${r.message}`}` }, lines: [] };
      }
      if (r.kind !== 'conflict') break;
      // 409 naming the size we sent, as large as the checkpoint: a pre-#280 witness cosigned that size with another
      // root (a current one answers 422 there, above; a 409 names a size other than `old`).
      if (r.size === old && old === cp.size) {
        return { outcome: conflict(name, cp.origin, 'root-mismatch', old, await storeSize(engine, cp.sessionId), `the witness cosigned size ${old} with a root other than ${cp.root}`), lines: [] };
      }
      watch.learn(name, cp.origin, { size: r.size });
      const have = await storeSize(engine, cp.sessionId);
      if (r.size > have) return { outcome: conflict(name, cp.origin, 'ahead', r.size, have, `the witness cosigned size ${r.size}; the store holds ${have} entries`), lines: [] };
      await learn(r.size);
      old = r.size;
    }
    if (r === undefined || r.kind === 'conflict' || r.kind === 'conflict-unsized') return { outcome: { witness: name, status: 'conflict', message: `the witness holds size ${r?.kind === 'conflict' ? r.size : '?'}` }, lines: [] };
    if (r.kind === 'unreachable') return { outcome: { witness: name, status: 'unreachable', message: r.message }, lines: [] };
    if (r.kind === 'refused') return { outcome: { witness: name, status: 'refused', message: `HTTP ${r.status}: ${r.message}` }, lines: [] };
    const mine = r.lines.filter((l) => l.startsWith(`\u2014 ${name} `));
    const check = verifyCosignatures(addSignatureLines(cp.signedCheckpoint, mine), [], [w.verifier]);
    if (!check.ok || check.cosignatures.length === 0) return { outcome: { witness: name, status: 'bad-cosignature', message: check.ok ? 'no cosignature by its key' : check.message }, lines: [] };
    await learn(cp.size);
    watch.learn(name, cp.origin, { size: cp.size, root: cp.root });
    return { outcome: { witness: name, status: 'cosigned' }, lines: mine };
  }

  function attach(cp: IssuedCheckpoint): string {
    const got = lines.get(`${cp.origin}\n${cp.size}\n${cp.root}`);
    return got === undefined ? cp.signedCheckpoint : addSignatureLines(cp.signedCheckpoint, [...got]);
  }

  /**
   * Only checkpoints the engine's signing log recorded (same origin, size and
   * root) are submitted: a caller of `cosign` cannot get witnesses to see a
   * checkpoint the engine key's log does not vouch for.
   */
  async function assertLogged(engine: NotaryEngine, cp: IssuedCheckpoint): Promise<void> {
    const records = typeof cp?.origin === 'string' ? await engine.store.signedCheckpoints(cp.origin) : [];
    const rec = records.find((r) => r.size === cp.size);
    if (rec === undefined || rec.root !== cp.root) {
      throw new TallyError('TALLY_WITNESS_NOT_LOGGED', 'Only checkpoints the engine signing log recorded are submitted to witnesses; this one is not in the log.', {
        details: `${String(cp?.origin)} size ${String(cp?.size)} root ${String(cp?.root)}${rec === undefined ? '' : `; the log holds root ${rec.root}`}`,
      });
    }
    if (!cp.signedCheckpoint.startsWith(`${cp.origin}\n${cp.size}\n`)) {
      throw new TallyError('TALLY_WITNESS_NOT_LOGGED', 'The signed checkpoint text does not match its origin and size; nothing was submitted.', { details: cp.origin });
    }
  }

  async function cosign(engine: NotaryEngine, cp: IssuedCheckpoint): Promise<CosignReport> {
    await assertLogged(engine, cp);
    const results = await Promise.all(witnesses.map((w) => ask(engine, cp, w)));
    // A witness holds a history the store lost: this checkpoint is not served, and nothing more is signed for its origin.
    const barred = watch.conflictOf(cp.origin);
    if (barred) throw witnessConflictError(barred);
    const key = `${cp.origin}\n${cp.size}\n${cp.root}`;
    const set = lines.get(key) ?? new Set<string>();
    const durable = cosignatureStoreOf(engine);
    // What an earlier run collected (the store keeps one line per witness), then this round's, kept durably.
    if (durable) for (const c of await durable.cosignatures(cp.origin, cp.size)) if (c.root === cp.root && !hasLineBy(set, c.witness)) set.add(c.line);
    for (const r of results) {
      for (const l of r.lines) {
        const witness = witnesses.find((w) => l.startsWith(`\u2014 ${w.verifier.name} `))?.verifier.name;
        if (witness === undefined || hasLineBy(set, witness)) continue;
        set.add(l);
        await durable?.recordCosignature({ origin: cp.origin, size: cp.size, root: cp.root, witness, line: l });
      }
    }
    if (set.size > 0) lines.set(key, set);
    const signedCheckpoint = attach(cp);
    const cosignedBy = witnesses.filter((w) => [...set].some((l) => l.startsWith(`\u2014 ${w.verifier.name} `))).map((w) => w.verifier.name);
    const quorum = options.policy === undefined || notaryVerifier === undefined ? undefined : checkWitnessPolicy(signedCheckpoint, [notaryVerifier], options.policy).ok;
    const report: CosignReport = { signedCheckpoint, outcomes: results.map((r) => r.outcome), cosignedBy, ...(quorum === undefined ? {} : { quorum }) };
    reports.set(`${cp.origin}\n${cp.size}`, report);
    return report;
  }


  const withCosignatures = (cp: IssuedCheckpoint, report: CosignReport): IssuedCheckpoint => ({ ...cp, signedCheckpoint: report.signedCheckpoint });

  const wrapped: WitnessedNotary = {
    name: notary.name,
    verifierKey: notary.verifierKey,
    cosign,
    report: (origin, size) => reports.get(`${origin}\n${size}`),
    conflicts: () => watch.conflicts(),
    async latestCheckpoint(engine, sessionId) {
      const cp = await notary.latestCheckpoint(engine, sessionId);
      const report = cp && reports.get(`${cp.origin}\n${cp.size}`);
      return cp && report ? withCosignatures(cp, report) : cp;
    },
    async issueCheckpoint(engine, sessionId, size) {
      await guard(engine, sessionId);
      const r = await notary.issueCheckpoint(engine, sessionId, size);
      if (!r.ok) return r;
      return { ok: true, ...withCosignatures(r, await cosign(engine, r)) };
    },
    async sealWithReceipt(engine, sessionId, artifacts) {
      await guard(engine, sessionId);
      const r = await notary.sealWithReceipt(engine, sessionId, artifacts);
      if (!r.ok) return r;
      const report = await cosign(engine, r.checkpoint);
      return { ...r, checkpoint: withCosignatures(r.checkpoint, report), signedCheckpoint: report.signedCheckpoint, witnesses: report };
    },
    inclusionProof: (engine, sessionId, index, size) => notary.inclusionProof(engine, sessionId, index, size),
    consistencyProof: (engine, sessionId, size1, size2) => notary.consistencyProof(engine, sessionId, size1, size2),
    async consistencyProofText(engine, sessionId, size1, size2) {
      await guard(engine, sessionId);
      const r = await notary.consistencyProofText(engine, sessionId, size1, size2);
      if (!r.ok) return r;
      const report = await cosign(engine, r);
      return { ...r, signedCheckpoint: report.signedCheckpoint, text: r.text.slice(0, r.text.length - r.signedCheckpoint.length) + report.signedCheckpoint };
    },
    async turnReceipt(engine, sessionId, index, opts = {}) {
      if (opts.signedCheckpoint !== undefined) return notary.turnReceipt(engine, sessionId, index, opts);
      await guard(engine, sessionId);
      const cp = await notary.issueCheckpoint(engine, sessionId, opts.size);
      if (!cp.ok) return cp;
      const report = await cosign(engine, cp);
      return notary.turnReceipt(engine, sessionId, index, { signedCheckpoint: report.signedCheckpoint });
    },
  };
  return Object.freeze(wrapped);
}

/** The engine store's cosignature table, when it keeps one (the memory, SQLite and PostgreSQL stores do). */
function cosignatureStoreOf(engine: NotaryEngine): CosignatureStore | undefined {
  const st = engine.store as Partial<CosignatureStore>;
  return typeof st.recordCosignature === 'function' && typeof st.cosignatures === 'function' && typeof st.witnessSize === 'function' && typeof st.recordWitnessSize === 'function'
    ? (st as CosignatureStore)
    : undefined;
}

function hasLineBy(set: ReadonlySet<string>, witness: string): boolean {
  for (const l of set) if (l.startsWith(`\u2014 ${witness} `)) return true;
  return false;
}
