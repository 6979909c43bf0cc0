/**
 * Helpers for the runtime (and the demo) to write frame-borne transitions:
 * each builds the `data.referee` item with its EIP-191 signature.
 */
import type { Intent } from '../intent/index.js';
import type { CanonicalObject } from '../protocol/index.js';
import { transitionMessage } from './bytes.js';
import { accountOf, signText, type RefereeSigner } from './eip191.js';
import { actTypedData } from './mandate-sig.js';

/** How a transition is signed: EIP-191 over its text (default), or EIP-712 `Act(string act)` (version-2 mandates; the item then says `scheme: "eip712"`). */
export type TransitionScheme = 'eip191' | 'eip712';

async function signAct(signer: RefereeSigner, text: string, scheme: TransitionScheme): Promise<{ signature: string; scheme?: 'eip712' }> {
  if (scheme === 'eip191') return { signature: await signText(signer, text) };
  const account = accountOf(signer);
  const sig = await (account.signTypedData as (t: ReturnType<typeof actTypedData>) => Promise<string>)(actTypedData(text));
  return { signature: sig.toLowerCase(), scheme: 'eip712' };
}

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
export async function signRedemption(executor: RefereeSigner, ref: TicketRef, intent: Intent | CanonicalObject, scheme: TransitionScheme = 'eip191'): Promise<{ ticket: number; intent: CanonicalObject; signature: string; scheme?: 'eip712' }> {
  return { ticket: ref.ticket, intent: intent as CanonicalObject, ...(await signAct(executor, transitionMessage({ op: 'redeem', ...ref }), scheme)) };
}

/** A release signed by the principal or the operator (use `{ ticket, by: 'anyone' }` unsigned after expiry or termination). */
export async function signRelease(signer: RefereeSigner, by: 'principal' | 'operator', ref: TicketRef, scheme: TransitionScheme = 'eip191'): Promise<{ ticket: number; by: 'principal' | 'operator'; signature: string; scheme?: 'eip712' }> {
  return { ticket: ref.ticket, by, ...(await signAct(signer, transitionMessage({ op: 'release', ...ref }), scheme)) };
}

/** A termination signed by the principal. */
export async function signTermination(principal: RefereeSigner, where: { readonly instance: string; readonly session: string }, scheme: TransitionScheme = 'eip191'): Promise<{ signature: string; scheme?: 'eip712' }> {
  return signAct(principal, transitionMessage({ op: 'terminate', ...where }), scheme);
}
