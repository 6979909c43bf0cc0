/**
 * Authorization: what each role may do (docs/WIRE.md, "Roles").
 *
 * | verb                      | runtime | agent                        | auditor | operator |
 * | ------------------------- | ------- | ---------------------------- | ------- | -------- |
 * | open, frame, finalize     | yes     | no                           | no      | yes      |
 * | turn: stand-down          | yes     | no                           | no      | yes      |
 * | turn: authored            | only in sessions without `spec.agents` | own sessions, own intents | no | yes |
 * | events, describe, GETs    | yes     | own sessions                 | yes     | yes      |
 *
 * An agent token is bound to a key: its "own sessions" are those whose
 * `spec.agents` maps one of its agent ids to the token's `signer` (a name
 * alone proves nothing: another desk may call its agent `alpha` too); an
 * authored turn carrying an intent whose `agent_id` is not one of those ids
 * is refused. Unknown sessions look exactly like other agents' sessions to
 * an agent token (`forbidden`), so it cannot probe ids.
 */
import type { SessionMessageKind, SessionSpec } from '../protocol/index.js';
import { intentOfAuthored } from '../rules/index.js';
import type { Principal } from './auth.js';
import type { WireFailure } from './vocabulary.js';

const WRITE_VERBS: readonly SessionMessageKind[] = ['session/open', 'session/frame', 'session/finalize'];

function forbidden(message: string): WireFailure {
  return { type: 'forbidden', message };
}

/** The coarse check before params are decoded: may this role call `method` at all? */
export function roleMayCall(p: Principal, method: SessionMessageKind): WireFailure | undefined {
  if (p.role === 'operator' || p.role === 'runtime') return undefined;
  if (p.role === 'auditor') return method === 'session/events' || method === 'session/describe' ? undefined : forbidden(`an auditor token is read-only; it may not call ${method}`);
  // agent
  if (WRITE_VERBS.includes(method)) return forbidden(`an agent token may not call ${method} (runtime tokens open, frame and finalize)`);
  return undefined;
}

function specAgents(spec: SessionSpec): readonly string[] | undefined {
  const a = spec['agents'];
  return typeof a === 'object' && a !== null && !Array.isArray(a) ? Object.keys(a) : undefined;
}

/** The token's agent ids that `spec.agents` maps to the token's signer (the ids it speaks for in this session). */
function boundAgents(p: Principal, spec: SessionSpec | undefined): readonly string[] {
  const a = spec?.['agents'];
  if (typeof a !== 'object' || a === null || Array.isArray(a) || p.signer === undefined) return [];
  const registry = a as Record<string, unknown>;
  return p.agents.filter((id) => Object.hasOwn(registry, id) && typeof registry[id] === 'string' && (registry[id] as string).toLowerCase() === p.signer);
}

/** May `p` read or write `sessionId` at all (spec is `undefined` for an unknown session)? */
export function sessionAccess(p: Principal, sessionId: string, spec: SessionSpec | undefined): WireFailure | undefined {
  if (p.role !== 'agent') return undefined;
  if (boundAgents(p, spec).length > 0) return undefined;
  return forbidden(`this agent token may not use session ${sessionId.slice(0, 16)}… (unknown, or its spec.agents does not map ${p.agents.join(', ')} to the token's signer ${p.signer ?? '(none)'})`);
}

/** May `p` write this turn body into a session with `spec`? Call after {@link sessionAccess}. */
export function turnAccess(p: Principal, spec: SessionSpec | undefined, body: { kind: 'authored'; bytes: Uint8Array } | { kind: 'stand-down' }): WireFailure | undefined {
  if (p.role === 'operator') return undefined;
  if (body.kind === 'stand-down') return p.role === 'runtime' ? undefined : forbidden('only a runtime token may stand a turn down');
  if (p.role === 'runtime') {
    if (spec && specAgents(spec) !== undefined) return forbidden('this session names its agents (spec.agents): only their agent tokens may author its turns');
    return undefined;
  }
  if (p.role !== 'agent') return forbidden(`a ${p.role} token may not write turns`);
  const carried = intentOfAuthored(body.bytes);
  if (carried && typeof carried.intent === 'object' && carried.intent !== null) {
    const agentId = (carried.intent as Record<string, unknown>)['agent_id'];
    if (typeof agentId === 'string' && !boundAgents(p, spec).includes(agentId)) {
      return forbidden(`the intent's agent_id ${JSON.stringify(agentId.slice(0, 64))} is not an agent of this token in this session (spec.agents must map it to the token's signer)`);
    }
  }
  return undefined;
}
