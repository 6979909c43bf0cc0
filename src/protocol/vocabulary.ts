/**
 * The closed vocabularies of the session protocol (seed 004), each a runtime
 * tuple tied to its TypeScript union BOTH ways: the union is derived from the
 * tuple, and the tuple is checked against an independently written union, so
 * adding a member to one without the other fails the build.
 */

/** Ordinal of the OPEN frame; wakes are numbered 0, 1, 2, … */
export const OPEN_ORDINAL = -1;

/** Why the runtime stood a turn down on the agent's behalf. */
export type FailureClass = 'provider' | 'timeout' | 'malformed';
/** Runtime tuple of every {@link FailureClass}. */
export const FAILURE_CLASSES = ['provider', 'timeout', 'malformed'] as const satisfies readonly FailureClass[];

/** A typed reason a session message was refused. Nothing is written when one is returned. */
export type SessionDiagnostic =
  | 'wrong-session'
  | 'broken-chain'
  | 'turn-conflict'
  | 'stale-frame'
  | 'not-pending'
  | 'sealed'
  | 'malformed-entry';
/** Runtime tuple of every {@link SessionDiagnostic}, in the seed's order. */
export const SESSION_DIAGNOSTICS = [
  'wrong-session',
  'broken-chain',
  'turn-conflict',
  'stale-frame',
  'not-pending',
  'sealed',
  'malformed-entry',
] as const satisfies readonly SessionDiagnostic[];

/** Every wire verb. There is deliberately no `advance`: only a frame or a turn moves a session. */
export type SessionMessageKind =
  | 'session/open'
  | 'session/turn'
  | 'session/frame'
  | 'session/events'
  | 'session/describe'
  | 'session/finalize';
/** Runtime tuple of every {@link SessionMessageKind}. */
export const SESSION_MESSAGE_KINDS = [
  'session/open',
  'session/turn',
  'session/frame',
  'session/events',
  'session/describe',
  'session/finalize',
] as const satisfies readonly SessionMessageKind[];

/** Every interaction a session must serve, in lifecycle order. */
export type SessionInteraction =
  | 'start'
  | 'open-delivery'
  | 'authored-or-stand-down'
  | 'wake-delta'
  | 'revision'
  | 'resume'
  | 'finalization'
  | 'artifacts';
/** Runtime tuple of every {@link SessionInteraction}. */
export const SESSION_INTERACTIONS = [
  'start',
  'open-delivery',
  'authored-or-stand-down',
  'wake-delta',
  'revision',
  'resume',
  'finalization',
  'artifacts',
] as const satisfies readonly SessionInteraction[];

/**
 * The TOTAL map proving every interaction is served by a real wire verb. A
 * missing interaction or an unknown verb fails the build.
 */
export const INTERACTION_MESSAGE = {
  start: 'session/open',
  'open-delivery': 'session/frame',
  'authored-or-stand-down': 'session/turn',
  'wake-delta': 'session/frame',
  revision: 'session/turn',
  resume: 'session/events',
  finalization: 'session/finalize',
  artifacts: 'session/finalize',
} as const satisfies Record<SessionInteraction, SessionMessageKind>;

/** The kinds of entry in a transcript, in the order they can first appear. */
export type EntryKind = 'genesis' | 'frame' | 'turn' | 'finalize';
/** Runtime tuple of every {@link EntryKind}. */
export const ENTRY_KINDS = ['genesis', 'frame', 'turn', 'finalize'] as const satisfies readonly EntryKind[];

/** Where a session is in its life. */
export type SessionPhase = 'awaiting-frame' | 'pending' | 'sealed';
/** Runtime tuple of every {@link SessionPhase}. */
export const SESSION_PHASES = ['awaiting-frame', 'pending', 'sealed'] as const satisfies readonly SessionPhase[];

// ── the other direction of the both-ways guard ─────────────────────────────
// `satisfies` above proves tuple ⊆ union. These prove union ⊆ tuple: if a
// member is added to a union but not to its tuple, `Missing` is not `never`
// and the assignment fails to compile.
type Missing<U, T extends readonly unknown[]> = Exclude<U, T[number]>;
type AssertNever<T extends never> = T;
export type _GuardFailureClasses = AssertNever<Missing<FailureClass, typeof FAILURE_CLASSES>>;
export type _GuardDiagnostics = AssertNever<Missing<SessionDiagnostic, typeof SESSION_DIAGNOSTICS>>;
export type _GuardMessageKinds = AssertNever<Missing<SessionMessageKind, typeof SESSION_MESSAGE_KINDS>>;
export type _GuardInteractions = AssertNever<Missing<SessionInteraction, typeof SESSION_INTERACTIONS>>;
export type _GuardEntryKinds = AssertNever<Missing<EntryKind, typeof ENTRY_KINDS>>;
export type _GuardPhases = AssertNever<Missing<SessionPhase, typeof SESSION_PHASES>>;

/** True when `x` is a member of the closed tuple `tuple`. */
export function isMember<T extends string>(tuple: readonly T[], x: unknown): x is T {
  return typeof x === 'string' && (tuple as readonly string[]).includes(x);
}
