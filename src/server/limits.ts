/** The limits of `tally serve` and their defaults (no runtime dependencies: the CLI help reads them; the slow-client ones are src/http's, shared with every server). */
import { DEFAULT_HTTP_TIMEOUTS, type HttpTimeouts } from '../http/timeouts.js';
import type { RateSpec } from './rate-limit.js';

/** Limits of a `WireServer`; every one has a default. */
export interface WireServerLimits extends HttpTimeouts {
  /** Largest request body in bytes (default 2 MiB: an authored body of 256 KiB as base64 fits many times). */
  readonly maxBodyBytes: number;
  /** Deepest JSON nesting accepted (default 64). */
  readonly maxDepth: number;
  /** Most requests in one JSON-RPC batch (default 32). */
  readonly maxBatch: number;
  /** Default per-token rate (default 200/s, burst 400); a token's `rate` overrides it. */
  readonly rate: RateSpec;
}

/** Default limits. */
export const DEFAULT_LIMITS: WireServerLimits = {
  maxBodyBytes: 2 * 1024 * 1024,
  maxDepth: 64,
  maxBatch: 32,
  rate: { perSecond: 200, burst: 400 },
  ...DEFAULT_HTTP_TIMEOUTS,
};

