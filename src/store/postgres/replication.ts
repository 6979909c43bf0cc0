/** The primary's view of its streaming standbys (`pg_stat_replication`), for readiness and the startup warning. */
import type { ReplicationStatus } from '../types.js';

/** One row: the standbys streaming now, those in the synchronous set, and `synchronous_commit`. */
export const REPLICATION_SQL = `SELECT COUNT(*)::int AS standbys, (COUNT(*) FILTER (WHERE sync_state IN ('sync', 'quorum')))::int AS synchronous, current_setting('synchronous_commit') AS commit FROM pg_stat_replication`;

/** The `synchronous_commit` levels at which a commit waits for a synchronous standby. */
const WAITING_COMMITS = ['on', 'remote_write', 'remote_apply'];

/** The status of a {@link REPLICATION_SQL} row. */
export function replicationStatus(row: { standbys: number; synchronous: number; commit: string } | undefined): ReplicationStatus {
  const { standbys = 0, synchronous = 0, commit = 'on' } = row ?? {};
  return { standbys, synchronous, synchronousCommit: commit, protected: synchronous > 0 && WAITING_COMMITS.includes(commit) };
}
