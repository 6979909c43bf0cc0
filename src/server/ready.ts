/**
 * `GET /readyz`: whether this server can do its job right now, for a load
 * balancer or Kubernetes. Four checks: the store answers a read and (its
 * `health()`) can commit, its schema
 * is the one this release migrates to, the engine key (when the server
 * signs) can still be read, and a replicated store (PostgreSQL) with
 * standbys has a synchronous one (a failover to an asynchronous standby can
 * lose acknowledged entries and signatures), the store has not moved (failed
 * over, restored) since the engine last signed without proof or an operator's
 * acknowledgement, and no witness answered that it
 * holds a history the store lost (a rolled-back or failed-over store). The body names each check's state and a short
 * reason; it never carries a path, a token or a key.
 */
import { access, constants } from 'node:fs/promises';
import { TallyError } from '../protocol/index.js';
import { judgeContinuity } from '../receipt/index.js';
import { hasContinuity, type TranscriptStore } from '../store/index.js';

/** The checks of `GET /readyz`, in the order the body lists them (docs/WIRE.md §5). */
export const READY_CHECKS = ['store', 'migrations', 'key', 'replication', 'continuity', 'witnesses'] as const;
/** One of {@link READY_CHECKS}. */
export type ReadyCheckName = (typeof READY_CHECKS)[number];

/** One check's answer: `ok`, `skipped` (does not apply) or `failed` with a reason. */
export type ReadyCheck = { readonly state: 'ok' | 'skipped'; readonly detail?: string } | { readonly state: 'failed'; readonly reason: string };

/** The body of `GET /readyz`. */
export interface ReadyReport {
  readonly ok: boolean;
  readonly checks: Readonly<Record<ReadyCheckName, ReadyCheck>>;
  /** The checks that failed, in order (empty when ready). */
  readonly failed: readonly ReadyCheckName[];
}

/** What {@link checkReadiness} looks at. */
export interface ReadinessTarget {
  readonly store: TranscriptStore;
  /** The engine key file, when the server signs (`--key`). */
  readonly keyPath?: string;
  /** The operator accepts asynchronous standbys (`--allow-async-replication`): the replication check passes, saying so. */
  readonly allowAsyncReplication?: boolean;
  /** The server signs (an engine or log key): the continuity check then applies. */
  readonly signs?: boolean;
  /** The witnessed notary's conflicts (`--witness-policy`): origins a witness holds a history of that the store lost. */
  readonly witnessConflicts?: () => readonly { readonly witness: string; readonly origin: string; readonly reason: string; readonly witnessSize: number; readonly storeSize: number }[];
}

/** A session id no session has: reading its head proves the store answers without touching real data. */
const PROBE = '0'.repeat(64);

function reasonOf(e: unknown): string {
  return e instanceof TallyError ? e.code : e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : 'error';
}

async function storeCheck(store: TranscriptStore): Promise<ReadyCheck> {
  try {
    await store.loadHead(PROBE);
  } catch (e) {
    return { state: 'failed', reason: `the store did not answer a read (${reasonOf(e)})` };
  }
  // A store that can read may still be unable to commit (a failed fsync, a full disk, a
  // read-only database): its own health check says so, and the server is not ready then.
  const health = await store.health?.();
  if (health !== undefined && !health.ok) return { state: 'failed', reason: `the store cannot commit (${health.code})` };
  return { state: 'ok' };
}

async function migrationsCheck(store: TranscriptStore): Promise<ReadyCheck> {
  if (store.schemaStatus === undefined) return { state: 'skipped' };
  try {
    const s = await store.schemaStatus();
    if (s.version === s.expected) return { state: 'ok' };
    return { state: 'failed', reason: `the store's schema is version ${s.version}; this release needs ${s.expected}` };
  } catch (e) {
    return { state: 'failed', reason: `the schema version could not be read (${reasonOf(e)})` };
  }
}

async function keyCheck(path: string | undefined): Promise<ReadyCheck> {
  if (path === undefined) return { state: 'skipped' };
  try {
    await access(path, constants.R_OK);
    return { state: 'ok' };
  } catch (e) {
    return { state: 'failed', reason: `the engine key file is not readable (${reasonOf(e)})` };
  }
}

/**
 * The replication check of a store and why: `skipped` for a store that does
 * not replicate, `ok` with no standbys or a synchronous one, `failed` while
 * standbys stream but none holds up commits (unless the operator allowed it).
 */
export async function replicationCheck(store: TranscriptStore, allowAsync = false): Promise<ReadyCheck> {
  if (store.replication === undefined) return { state: 'skipped' };
  let r;
  try {
    r = await store.replication();
  } catch (e) {
    return { state: 'failed', reason: `the replication state could not be read (${reasonOf(e)})` };
  }
  if (r.standbys === 0) return { state: 'ok', detail: 'no standbys' };
  const mode = `${r.synchronous} of ${r.standbys} standbys synchronous, synchronous_commit=${r.synchronousCommit}`;
  if (r.protected) return { state: 'ok', detail: mode };
  const risk = `${mode}: a failover can lose acknowledged entries and signatures`;
  if (allowAsync) return { state: 'ok', detail: `${risk} (allowed by the operator)` };
  return { state: 'failed', reason: `${risk} (set synchronous_standby_names, or allow it with --allow-async-replication)` };
}

/**
 * The continuity check: `skipped` when the server signs nothing or the store
 * keeps no continuity record; `failed` while the engine would refuse to sign
 * because the store moved (a failover, a restored or copied file) without
 * proof that it holds everything signed, until an operator acknowledges it
 * (`tally operator acknowledge-failover`); the same rule every signature
 * applies (`judgeContinuity`).
 */
export async function continuityCheck(store: TranscriptStore, signs: boolean): Promise<ReadyCheck> {
  if (!signs || !hasContinuity(store)) return { state: 'skipped' };
  let verdict;
  try {
    verdict = judgeContinuity(await store.continuityState());
  } catch (e) {
    return { state: 'failed', reason: `the store's position could not be read (${reasonOf(e)})` };
  }
  if (verdict.ok) return { state: 'ok', detail: verdict.proof };
  return { state: 'failed', reason: `TALLY_SIGN_TIMELINE_CHANGED: ${verdict.message}` };
}

/**
 * The witnesses check: `skipped` without witnesses, `failed` once any witness
 * answered that it holds a history the store does not (it stays failed: the
 * store lost what was signed, and only an operator can decide what now).
 */
export function witnessesCheck(conflicts: ReadinessTarget['witnessConflicts']): ReadyCheck {
  if (conflicts === undefined) return { state: 'skipped' };
  const all = conflicts();
  if (all.length === 0) return { state: 'ok' };
  const c = all[0]!;
  const more = all.length > 1 ? ` (and ${all.length - 1} more origin${all.length > 2 ? 's' : ''})` : '';
  return { state: 'failed', reason: `witness ${c.witness} holds a history of ${c.origin} the store lost (${c.reason}: it holds size ${c.witnessSize}, the store ${c.storeSize} entries)${more}; nothing is signed for it` };
}

/**
 * Runs every readiness check (concurrently).
 *
 * @example
 * const r = await checkReadiness({ store });
 * // r.ok, r.failed, r.checks.store.state
 */
export async function checkReadiness(target: ReadinessTarget): Promise<ReadyReport> {
  const [store, migrations, key, replication] = await Promise.all([storeCheck(target.store), migrationsCheck(target.store), keyCheck(target.keyPath), replicationCheck(target.store, target.allowAsyncReplication)]);
  // Asked only of a store that answers: its position means nothing while it cannot be read (the store check says why).
  const continuity: ReadyCheck = store.state === 'ok' ? await continuityCheck(target.store, target.signs ?? target.keyPath !== undefined) : { state: 'skipped', detail: 'the store does not answer' };
  const checks = { store, migrations, key, replication, continuity, witnesses: witnessesCheck(target.witnessConflicts) };
  const failed = READY_CHECKS.filter((n) => checks[n].state === 'failed');
  return { ok: failed.length === 0, checks, failed };
}
