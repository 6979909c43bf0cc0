/**
 * Per-token rate limiting: one token bucket per token name. A bucket holds at
 * most `burst` requests and refills at `perSecond`; a request takes one. When
 * the bucket is empty the request is refused with how long until one is back.
 */

/** Rate of a bucket. */
export interface RateSpec {
  readonly perSecond: number;
  readonly burst: number;
}

/** Rounding slack of the refill arithmetic (far below one request at any configurable rate). */
const EPSILON = 1e-9;

/** One token bucket; `now` is milliseconds from a monotonic clock. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly spec: RateSpec,
    now: number,
  ) {
    if (!(spec.perSecond > 0) || !(spec.burst >= 1)) throw new RangeError('rate: perSecond must be > 0 and burst >= 1');
    this.tokens = spec.burst;
    this.last = now;
  }

  /** Takes one request: `0` when allowed, else the milliseconds until one will be. */
  take(now: number): number {
    const elapsed = Math.max(0, now - this.last);
    this.last = Math.max(this.last, now);
    this.tokens = Math.min(this.spec.burst, this.tokens + (elapsed * this.spec.perSecond) / 1000);
    // Refills add up in floating point (0.282 + 0.717 + 0.001 is 0.9999999999999999): a bucket
    // that is full to within EPSILON is full, so a caller that waits exactly the wait named is admitted.
    if (this.tokens >= 1 - EPSILON) {
      this.tokens = Math.max(0, this.tokens - 1);
      return 0;
    }
    // The smallest whole wait after which a request is admitted (the estimate corrected for rounding both ways).
    const fits = (ms: number): boolean => this.tokens + (ms * this.spec.perSecond) / 1000 >= 1 - EPSILON;
    let wait = Math.max(1, Math.ceil(((1 - EPSILON - this.tokens) * 1000) / this.spec.perSecond));
    while (wait > 1 && fits(wait - 1)) wait--;
    while (!fits(wait)) wait++;
    return wait;
  }
}

/** Buckets by key, created on first use. */
export class RateLimiter {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly defaults: RateSpec,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Takes one request for `key` (rate `spec` or the default): `0` or the wait in ms. */
  take(key: string, spec: RateSpec = this.defaults): number {
    const now = this.clock();
    let b = this.buckets.get(key);
    if (!b) {
      b = new TokenBucket(spec, now);
      this.buckets.set(key, b);
    }
    return b.take(now);
  }
}
