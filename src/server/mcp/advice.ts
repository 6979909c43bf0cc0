/**
 * What a model should do next after each refusal, and after a rejected
 * intent (from the intent ruling catalogue). Plain text for tool results.
 */
import { INTENT_RULING_CATALOGUE } from '../../intent/index.js';
import type { WireErrorType } from '../vocabulary.js';

const ADVICE: Partial<Record<WireErrorType | 'network' | 'bad-response', string>> = {
  'wrong-session': 'No such session: check the sessionId (session_open returns it).',
  'broken-chain': 'The ordinal or parentHash does not continue the chain. Call session_describe and quote its pending frame (or nextOrdinal for a frame).',
  'turn-conflict': 'This slot already holds a different answer; nothing was written. Do not retry with other bytes. Read it with session_events, then answer the next frame.',
  'stale-frame': 'The frameRoot is not the one delivered for this slot. Call session_describe and quote pending.frameRoot and pending.entryHash.',
  'not-pending': 'Wrong moment: a turn needs a pending frame; a frame or finalize needs none. Call session_describe to see the phase.',
  sealed: 'The session is sealed; nothing more can be written. Read the receipt with session_describe.',
  'malformed-entry': 'An argument is missing, mistyped or out of range; see the issues, fix the arguments and call again.',
  unauthorized: 'The server did not accept the token; the operator must configure TALLY_TOKEN.',
  forbidden: "This token may not do this (wrong role, or another agent's session or intent). Do not retry.",
  'payload-too-large': 'The request is too large; send smaller content.',
  'rate-limited': 'Too many requests: wait data.retryAfterMs, then call again with the same arguments.',
  unavailable: 'The server is restarting or busy: call again with the same arguments (safe: nothing is written twice).',
  internal: 'The server failed: call again with the same arguments (safe), and report it if it persists.',
  network: 'The server could not be reached: call again with the same arguments (safe: nothing is written twice).',
};

/** Advice for a refusal type; `retryable: false` on a type that is usually retried (a corrupt store's `internal`) says not to. */
export function adviceFor(type: string, retryable = true): string {
  if (!retryable && type === 'internal') return "The server's store is damaged: calling again will not help. Report it to the operator.";
  return ADVICE[type as WireErrorType] ?? 'See docs/WIRE.md for this error type.';
}

/** How to fix a rejected intent, from the ruling catalogue. */
export function intentFix(code: string): string | undefined {
  return INTENT_RULING_CATALOGUE.find((e) => e.code === code)?.fix;
}
