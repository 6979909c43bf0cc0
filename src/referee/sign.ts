/**
 * Helpers for the runtime (and the demo) to write frame-borne transitions:
 * each builds the `data.referee` item with its EIP-191 signature.
 */
import type { Intent } from '../intent/index.js';
import type { CanonicalObject } from '../protocol/index.js';
import { transitionMessage } from './bytes.js';
import { signText, type RefereeSigner } from './eip191.js';

/** Where a ticket lives. */
export interface TicketRef {
  readonly instance: string;
  readonly session: string;
  readonly ticket: number;
  readonly proofHash: string;
}

/**
 * A redemption signed by the mandate's executor; `intent` must be the exact anchored Intent.
 *
 * @example
 * data.referee.redemptions.push(await signRedemption(executorKey, { instance, session, ticket: 1, proofHash }, intent));
 */
export async function signRedemption(executor: RefereeSigner, ref: TicketRef, intent: Intent | CanonicalObject): Promise<{ ticket: number; intent: CanonicalObject; signature: string }> {
  const signature = await signText(executor, transitionMessage({ op: 'redeem', ...ref }));
  return { ticket: ref.ticket, intent: intent as CanonicalObject, signature };
}

/** A release signed by the principal or the operator (use `{ ticket, by: 'anyone' }` unsigned after expiry or termination). */
export async function signRelease(signer: RefereeSigner, by: 'principal' | 'operator', ref: TicketRef): Promise<{ ticket: number; by: 'principal' | 'operator'; signature: string }> {
  const signature = await signText(signer, transitionMessage({ op: 'release', ...ref }));
  return { ticket: ref.ticket, by, signature };
}

/** A termination signed by the principal. */
export async function signTermination(principal: RefereeSigner, where: { readonly instance: string; readonly session: string }): Promise<{ signature: string }> {
  return { signature: await signText(principal, transitionMessage({ op: 'terminate', ...where })) };
}
