/** Messages between the main thread and an Intent validation worker (see ./pool.ts). */
import type { IntentLimits, ValidateIntentResult } from './validate.js';
import type { NonceLookup } from './nonce-guard.js';

/** main → worker: validate the Intent carried by `authored`. */
export interface ValidateRequest {
  readonly t: 'validate';
  readonly id: number;
  readonly authored: Uint8Array;
  /** The signer registry as `[agentId, address]` pairs. */
  readonly signers: ReadonlyArray<readonly [string, string]>;
  readonly now: number;
  readonly clockSkewMs?: number;
  readonly maxTtlHorizonMs?: number;
  readonly limits?: IntentLimits;
  /** The answer of `isNonceUsed` for one key, looked up before sending (saves a round trip when it is the key asked). */
  readonly nonceHint?: { readonly agentId: string; readonly nonce: string; readonly lookup: NonceLookup };
}

/** main → worker: the answer to a {@link NonceQuery}. */
export type NonceReply = { readonly t: 'nonce-reply'; readonly id: number; readonly lookup: NonceLookup } | { readonly t: 'nonce-error'; readonly id: number; readonly message: string };

/** worker → main: `isNonceUsed(agentId, nonce)` for request `id`. */
export interface NonceQuery {
  readonly t: 'nonce';
  readonly id: number;
  readonly agentId: string;
  readonly nonce: string;
}

/** worker → main: the outcome of request `id`. */
export type ValidateReply =
  | { readonly t: 'done'; readonly id: number; readonly carried: false }
  | { readonly t: 'done'; readonly id: number; readonly carried: true; readonly result: ValidateIntentResult }
  | { readonly t: 'error'; readonly id: number; readonly code: string; readonly message: string; readonly details?: string };

/** Any message a worker receives. */
export type ToWorker = ValidateRequest | NonceReply;
/** Any message a worker sends. */
export type FromWorker = NonceQuery | ValidateReply;
