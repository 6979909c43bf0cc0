/**
 * What the grader gave the page of the engine log: the binding, the log key
 * or the log identity (and its successors, oldest first), from the pickers;
 * and the combinations the command line refuses as usage errors.
 */
import { byId } from './dom.js';
import type { LogInputs } from './log-binding.js';

/** The log binding, log key and log identity (oldest first) the grader picked (log-proof.tlog-proof, log.vkey, log.identity…), if any. */
export async function suppliedLog(): Promise<LogInputs> {
  const proof = byId<HTMLInputElement>('in-log-proof').files?.[0];
  const key = byId<HTMLInputElement>('in-log-key').files?.[0];
  const ids = [...(byId<HTMLInputElement>('in-log-identity').files ?? [])];
  return { ...(proof ? { logProof: await proof.text() } : {}), ...(key ? { logKey: await key.text() } : {}), ...(ids.length > 0 ? { logIdentity: await Promise.all(ids.map((f) => f.text())) } : {}) };
}

/** What the command line refuses as a usage error (exit 2) of the log's pins: a key and an identity, or an identity and a witness policy (it states its own). */
export function logConflict(log: LogInputs, policy: string | undefined): string | undefined {
  if (log.logIdentity === undefined) return undefined;
  if (log.logKey !== undefined) return 'give either the log identity (log.identity) or the log key (log.vkey), not both: the identity names the log key (as tally verify refuses --log-identity with --log-key)';
  if (policy !== undefined) return "the log identity states the witness policy: drop the witness policy file (as tally verify refuses --log-identity with --policy)";
  return undefined;
}
