/**
 * Retry timing: exponential backoff with full jitter (a uniformly random wait
 * in [0, min(maxMs, baseMs·2^attempt)]), so many clients that failed together
 * do not come back together.
 */

/** Retry policy of a client. */
export interface RetryPolicy {
  /** Retries after the first attempt (default 5; 0 disables retrying). */
  readonly retries: number;
  /** First backoff ceiling in ms (default 100). */
  readonly baseMs: number;
  /** Largest backoff ceiling in ms (default 5000). */
  readonly maxMs: number;
}

/** The default policy. */
export const DEFAULT_RETRY: RetryPolicy = { retries: 5, baseMs: 100, maxMs: 5_000 };

/**
 * The wait before retry number `attempt` (0-based), given `random()` in [0, 1).
 *
 * @example
 * backoffDelay(3, DEFAULT_RETRY, Math.random); // somewhere in [0, 800]
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * (ceiling + 1));
}

/** Sleeps `ms`, or less if `signal` aborts (then rejects with its reason). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    function onAbort(): void {
      clearTimeout(t);
      reject(signal!.reason);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
