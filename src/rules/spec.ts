/**
 * The intent extension of a session spec, sealed in genesis:
 *
 * ```json
 * { "name": "…",
 *   "agents": { "<agent_id>": "0x<40 hex signer address>", … },
 *   "intent": { "clockSkewMs": 0, "maxTtlHorizonMs": 86400000,
 *               "limits": { "maxIntegerDigits": 18, "maxFractionDigits": 18 } } }
 * ```
 *
 * `agents` is the signer registry (the only addresses whose intents can be
 * admitted); `intent` holds the validation options. Both are optional; a
 * session without `agents` records authored turns without intent rulings.
 */
import { AGENT_ID_PATTERN, MAX_TOKEN_LENGTH } from '../intent/fields.js';
import type { SessionSpec } from '../protocol/index.js';

/** Intent validation options as sealed in the spec. */
export interface IntentSpecOptions {
  readonly clockSkewMs?: number;
  readonly maxTtlHorizonMs?: number;
  readonly limits?: { readonly maxIntegerDigits?: number; readonly maxFractionDigits?: number };
}

/** Most agents one session may register. */
export const MAX_AGENTS = 1000;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const AGENT_ID = new RegExp(AGENT_ID_PATTERN);
const ZERO = /^0x0{40}$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function nonNegInt(v: unknown): boolean {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** Checks the `agents` and `intent` members of a spec; returns a problem or `undefined`. */
export function checkIntentSpec(spec: SessionSpec): string | undefined {
  const agents = spec['agents'];
  if (agents !== undefined) {
    if (!isObject(agents)) return 'spec.agents must be an object of agent_id → signer address';
    const ids = Object.keys(agents);
    if (ids.length === 0) return 'spec.agents must register at least one agent';
    if (ids.length > MAX_AGENTS) return `spec.agents registers more than ${MAX_AGENTS} agents`;
    for (const id of ids) {
      // The Intent's own agent_id rule: an id no Intent can carry could never be admitted.
      if (id.length > MAX_TOKEN_LENGTH || !AGENT_ID.test(id)) return `spec.agents: agent id ${JSON.stringify(id.slice(0, 40))} must be 1–${MAX_TOKEN_LENGTH} printable ASCII characters without spaces (the Intent's agent_id)`;
      const a = agents[id];
      if (typeof a !== 'string' || !ADDRESS.test(a)) return `spec.agents.${id} must be a 0x-prefixed 20-byte hex address`;
      if (ZERO.test(a)) return `spec.agents.${id} must not be the zero address`;
    }
  }
  const intent = spec['intent'];
  if (intent !== undefined) {
    if (!isObject(intent)) return 'spec.intent must be an object';
    for (const k of Object.keys(intent)) if (!['clockSkewMs', 'maxTtlHorizonMs', 'limits'].includes(k)) return `spec.intent: unknown option "${k}"`;
    if (intent['clockSkewMs'] !== undefined && !nonNegInt(intent['clockSkewMs'])) return 'spec.intent.clockSkewMs must be a non-negative integer (ms)';
    if (intent['maxTtlHorizonMs'] !== undefined && !nonNegInt(intent['maxTtlHorizonMs'])) return 'spec.intent.maxTtlHorizonMs must be a non-negative integer (ms)';
    const limits = intent['limits'];
    if (limits !== undefined) {
      if (!isObject(limits)) return 'spec.intent.limits must be an object';
      for (const k of Object.keys(limits)) {
        if (k !== 'maxIntegerDigits' && k !== 'maxFractionDigits') return `spec.intent.limits: unknown limit "${k}"`;
        const v = limits[k];
        if (!nonNegInt(v) || (v as number) > 80) return `spec.intent.limits.${k} must be an integer from 0 to 80`;
      }
    }
    if (agents === undefined) return 'spec.intent needs spec.agents (the signer registry)';
  }
  return undefined;
}

/** The registered signer of `agentId`, or null. */
export function signerOf(spec: SessionSpec, agentId: string): string | null {
  const agents = spec['agents'];
  if (!isObject(agents) || !Object.hasOwn(agents, agentId)) return null;
  const a = agents[agentId];
  return typeof a === 'string' ? a : null;
}

/**
 * The store key of an agent's nonce reservations: `"<signer> <agent_id>"`,
 * the registered signer lowercased. A reservation is keyed by what
 * authenticates it (the signer's key), so a session that maps the same name
 * to another signer never meets these nonces; the name stays in the key
 * because an Intent's signature covers its `agent_id`, so one signer under
 * two names has two nonce spaces, exactly as one session sees them. The space
 * (which no `agent_id` holds) keeps it apart from the name-keyed rows of
 * stores written before keys (kept, unread, after their migration).
 *
 * @example
 * nonceKey('0xAbC…', 'alpha'); // '0xabc… alpha'
 */
export function nonceKey(signer: string, agentId: string): string {
  return `${signer.toLowerCase()} ${agentId}`;
}

/** The nonce key of `agentId` in `spec`, or `undefined` for an unregistered agent. */
export function nonceKeyOf(spec: SessionSpec, agentId: string): string | undefined {
  const s = signerOf(spec, agentId);
  return s === null ? undefined : nonceKey(s, agentId);
}

/** The intent options sealed in the spec. */
export function intentOptionsOf(spec: SessionSpec): IntentSpecOptions {
  const o = spec['intent'];
  return isObject(o) ? (o as IntentSpecOptions) : {};
}
