/**
 * `agent-tally/client`: a typed client of `tally serve` whose retries are safe
 * (every verb is idempotent; turns are content-addressed).
 *
 * @example
 * import { createClient } from 'agent-tally/client';
 * const client = createClient({ url: 'http://127.0.0.1:8787', token });
 */
export { createClient } from './client.js';
export type { TallyClient, ClientOptions, CallOptions, ClientTurnBody, ClientTurnInput, EventsOptions, FollowOptions, WireCallOutcome } from './client.js';
export { rulingView } from './types.js';
export type { ClientFinalizeResult, ClientReceipt, RulingView, SignedParts } from './types.js';
export { WireError } from './errors.js';
export type { ClientFailureType } from './errors.js';
export { DEFAULT_RETRY, backoffDelay } from './retry.js';
export { keepAliveTransport, fetchTransport } from './transport.js';
export type { Transport, TransportRequest, TransportResponse, KeepAliveOptions } from './transport.js';
export type { RetryPolicy } from './retry.js';
export type { WireErrorType, WireFailure } from '../server/vocabulary.js';
export type { InclusionProofResult } from '../server/service.js';
