import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  FAILURE_CLASSES,
  INTERACTION_MESSAGE,
  OPEN_ORDINAL,
  SESSION_DIAGNOSTICS,
  SESSION_INTERACTIONS,
  SESSION_MESSAGE_KINDS,
  type FailureClass,
  type SessionDiagnostic,
  type SessionInteraction,
  type SessionMessageKind,
} from '../../src/protocol/index.js';

describe('closed vocabularies (seed 004)', () => {
  it('are exactly the seed tuples, in order', () => {
    expect(OPEN_ORDINAL).toBe(-1);
    expect(FAILURE_CLASSES).toEqual(['provider', 'timeout', 'malformed']);
    expect(SESSION_DIAGNOSTICS).toEqual(['wrong-session', 'broken-chain', 'turn-conflict', 'stale-frame', 'not-pending', 'sealed', 'malformed-entry']);
    expect(SESSION_MESSAGE_KINDS).toEqual(['session/open', 'session/turn', 'session/frame', 'session/events', 'session/describe', 'session/finalize']);
    expect(SESSION_INTERACTIONS).toEqual(['start', 'open-delivery', 'authored-or-stand-down', 'wake-delta', 'revision', 'resume', 'finalization', 'artifacts']);
  });

  it('has no advance verb', () => {
    expect(SESSION_MESSAGE_KINDS.some((k) => k.includes('advance'))).toBe(false);
  });

  it('maps every interaction to a real verb, and every verb but describe serves one', () => {
    expect(Object.keys(INTERACTION_MESSAGE).sort()).toEqual([...SESSION_INTERACTIONS].sort());
    for (const v of Object.values(INTERACTION_MESSAGE)) expect(SESSION_MESSAGE_KINDS as readonly string[]).toContain(v);
    const served = new Set<string>(Object.values(INTERACTION_MESSAGE));
    expect(SESSION_MESSAGE_KINDS.filter((k) => !served.has(k))).toEqual(['session/describe']);
  });

  it('ties each tuple to its union both ways (types)', () => {
    expectTypeOf<(typeof FAILURE_CLASSES)[number]>().toEqualTypeOf<FailureClass>();
    expectTypeOf<(typeof SESSION_DIAGNOSTICS)[number]>().toEqualTypeOf<SessionDiagnostic>();
    expectTypeOf<(typeof SESSION_MESSAGE_KINDS)[number]>().toEqualTypeOf<SessionMessageKind>();
    expectTypeOf<(typeof SESSION_INTERACTIONS)[number]>().toEqualTypeOf<SessionInteraction>();
    expectTypeOf<keyof typeof INTERACTION_MESSAGE>().toEqualTypeOf<SessionInteraction>();
  });
});
