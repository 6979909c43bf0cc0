/** The limits of `tally serve` and their defaults (no dependencies: the CLI help reads them). */
import type { RateSpec } from './rate-limit.js';

/** Limits of a `WireServer`; every one has a default. */
export interface WireServerLimits {
  /** Largest request body in bytes (default 2 MiB: an authored body of 256 KiB as base64 fits many times). */
  readonly maxBodyBytes: number;
  /** Deepest JSON nesting accepted (default 64). */
  readonly maxDepth: number;
  /** Most requests in one JSON-RPC batch (default 32). */
  readonly maxBatch: number;
  /** Default per-token rate (default 200/s, burst 400); a token's `rate` overrides it. */
  readonly rate: RateSpec;
  /** Time allowed to receive the request headers (default 10 s). */
  readonly headersTimeoutMs: number;
  /** Time allowed to receive the whole request (default 30 s). */
  readonly requestTimeoutMs: number;
  /** Idle keep-alive time (default 5 s). */
  readonly keepAliveTimeoutMs: number;
}

/** Default limits. */
export const DEFAULT_LIMITS: WireServerLimits = {
  maxBodyBytes: 2 * 1024 * 1024,
  maxDepth: 64,
  maxBatch: 32,
  rate: { perSecond: 200, burst: 400 },
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
};

