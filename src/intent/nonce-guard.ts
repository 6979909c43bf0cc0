/**
 * The in-process nonce seam: reserves `(agent_id, nonce)` exactly once. The
 * check-and-set is synchronous, so no interleaving of concurrent callers can
 * admit two reservations; a durable store offers the same contract with an
 * atomic `INSERT … ON CONFLICT DO NOTHING` on `(agent_id, nonce)`.
 */

/** Outcome of a reservation: won, or lost to the Intent that holds the nonce. */
export type NonceReservation = { readonly ok: true } | { readonly ok: false; readonly usedBy: string };

/** What `isNonceUsed` may answer: unused (`false`), used (`true`), or used by a known Intent hash. */
export type NonceLookup = boolean | { readonly usedBy: string };

/** An atomic single-use reservation of `(agentId, nonce)` pairs. */
export interface NonceGuard {
  /** Reserves the pair for `intentHash`; only the first caller ever gets `{ ok: true }`. */
  reserve(agentId: string, nonce: string, intentHash: string): NonceReservation;
  /** True when the pair is reserved. */
  has(agentId: string, nonce: string): boolean;
  /** Drop-in `isNonceUsed` for `validateIntent`: `false`, or `{ usedBy }` naming the holder. */
  lookup(agentId: string, nonce: string): NonceLookup;
  /** Number of reserved pairs. */
  readonly size: number;
}

/**
 * Creates an empty in-memory nonce guard (grows with every reservation; one per session).
 *
 * @example
 * const guard = createNonceGuard();
 * guard.reserve('a1', '7', hash);  // { ok: true }
 * guard.reserve('a1', '7', other); // { ok: false, usedBy: hash }
 * await validateIntent(input, { ...opts, isNonceUsed: guard.lookup });
 */
export function createNonceGuard(): NonceGuard {
  const byAgent = new Map<string, Map<string, string>>();
  let size = 0;
  const holder = (agentId: string, nonce: string): string | undefined => byAgent.get(agentId)?.get(nonce);
  return {
    reserve(agentId: string, nonce: string, intentHash: string): NonceReservation {
      let nonces = byAgent.get(agentId);
      if (nonces === undefined) {
        nonces = new Map();
        byAgent.set(agentId, nonces);
      }
      const existing = nonces.get(nonce);
      if (existing !== undefined) return { ok: false, usedBy: existing };
      nonces.set(nonce, intentHash);
      size++;
      return { ok: true };
    },
    has: (agentId: string, nonce: string): boolean => holder(agentId, nonce) !== undefined,
    lookup(agentId: string, nonce: string): NonceLookup {
      const usedBy = holder(agentId, nonce);
      return usedBy === undefined ? false : { usedBy };
    },
    get size() {
      return size;
    },
  };
}
