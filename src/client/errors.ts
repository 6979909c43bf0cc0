/**
 * The one error the client throws: a refusal that is not a session
 * diagnostic (auth, rate limit, size limits, a server bug), or a failure to
 * reach the server after every retry. Session diagnostics are never thrown:
 * they come back as `{ ok: false, diagnostic, message }` like the engine's.
 */
import { TallyError } from '../protocol/index.js';
import type { WireErrorType } from '../server/vocabulary.js';

/** What went wrong on the client's side of the wire (never reached the server, or got an unreadable answer). */
export type ClientFailureType = 'network' | 'bad-response';

/** A thrown wire failure. `code` is `TALLY_WIRE_<TYPE>` (e.g. `TALLY_WIRE_FORBIDDEN`). */
export class WireError extends TallyError {
  /** The wire error type (docs/WIRE.md), or a client-side failure. */
  readonly type: WireErrorType | ClientFailureType;
  /** HTTP status, when a response arrived. */
  readonly status: number | undefined;
  /** The server's `error.data` (e.g. `retryAfterMs`, `issues`). */
  readonly data: Readonly<Record<string, unknown>> | undefined;
  /** How many attempts were made. */
  readonly attempts: number;

  constructor(type: WireErrorType | ClientFailureType, message: string, options: { status?: number; data?: Readonly<Record<string, unknown>>; attempts?: number; cause?: unknown } = {}) {
    super(`TALLY_WIRE_${type.toUpperCase().replaceAll('-', '_')}`, message, options.cause === undefined ? {} : { cause: options.cause });
    this.name = 'WireError';
    this.type = type;
    this.status = options.status;
    this.data = options.data;
    this.attempts = options.attempts ?? 1;
  }

  /** Milliseconds the server asked to wait (rate limits), if it said. */
  get retryAfterMs(): number | undefined {
    const v = this.data?.['retryAfterMs'];
    return typeof v === 'number' ? v : undefined;
  }
}
