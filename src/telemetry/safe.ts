/**
 * The one gate every span attribute and metric label passes: a fixed set of
 * keys, each with the exact shape (or vocabulary) its value may have. Anything else (a token
 * pasted where a session id belongs, authored bytes, a judge's message) is
 * dropped, never truncated or escaped: telemetry carries identifiers, counts
 * and vocabulary words, and no secret or authored byte can match those shapes.
 */
import type { Attributes } from '@opentelemetry/api';
import { CHAIN_ERROR_CODES, SESSION_DIAGNOSTICS } from '../protocol/index.js';
import { ATTR, TURN_OUTCOMES, VERBS, type AttrKey } from './names.js';

const HEX64 = /^[0-9a-f]{64}$/;
/** Ruling codes, store outcomes, judge failures: lower-case snake/kebab words. */
const CODE = /^[a-z][a-z0-9_-]{0,39}$/;
/** Error kinds: a Tally error code (`TALLY_STORE_IO`) or an error class name. */
const KIND = /^(?:[A-Z][A-Z0-9_]{1,39}|[A-Z][A-Za-z]{0,39})$/;
/** Judge model ids as an operator configures them (`gpt-4o-mini`, `org/model-1.5`). */
const MODEL = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,39}$/;
/** A route template: lower-case path words and `{id}`. */
const ROUTE = /^\/[a-z{}/-]{0,63}$/;
/** An MCP tool name (set only for a tool the upstream offered): a short plain word. */
const TOOL = /^[A-Za-z][A-Za-z0-9_.-]{0,39}$/;
const TOOL_OUTCOMES: ReadonlySet<string> = new Set(['result', 'error', 'refused', 'unknown', 'too-large', 'unavailable']);

const DIAGNOSTICS: ReadonlySet<string> = new Set<string>([...SESSION_DIAGNOSTICS, ...CHAIN_ERROR_CODES]);
const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'OTHER']);

type Shape = 'hex64' | 'int' | 'bool' | RegExp | ReadonlySet<string>;

const SHAPES: Readonly<Record<AttrKey, Shape>> = {
  [ATTR.session]: 'hex64',
  [ATTR.ordinal]: 'int',
  [ATTR.index]: 'int',
  [ATTR.outcome]: new Set(TURN_OUTCOMES),
  [ATTR.ruling]: CODE,
  [ATTR.diagnostic]: DIAGNOSTICS,
  [ATTR.duplicate]: 'bool',
  [ATTR.verb]: new Set(VERBS),
  [ATTR.batch]: 'int',
  [ATTR.storeOutcome]: CODE,
  [ATTR.errorKind]: KIND,
  [ATTR.model]: MODEL,
  [ATTR.failure]: CODE,
  [ATTR.entries]: 'int',
  [ATTR.route]: ROUTE,
  [ATTR.method]: METHODS,
  [ATTR.status]: 'int',
  [ATTR.genAiOperation]: new Set(['execute_tool']),
  [ATTR.genAiTool]: TOOL,
  [ATTR.genAiCallId]: 'int',
  [ATTR.genAiConversation]: 'hex64',
  [ATTR.genAiGuardrail]: new Set(['admitted', 'refused']),
  [ATTR.toolOutcome]: TOOL_OUTCOMES,
};

/** True when `value` has the shape allowed for `key`. */
export function allowed(key: string, value: unknown): boolean {
  const shape = (SHAPES as Record<string, Shape | undefined>)[key];
  if (shape === undefined) return false;
  if (shape === 'hex64') return typeof value === 'string' && HEX64.test(value);
  if (shape === 'int') return typeof value === 'number' && Number.isSafeInteger(value) && value >= -1;
  if (shape === 'bool') return typeof value === 'boolean';
  if (typeof value !== 'string') return false;
  return shape instanceof RegExp ? shape.test(value) : shape.has(value);
}

/** The entries of `attrs` that pass {@link allowed}; the rest are dropped. */
export function safeAttributes(attrs: Readonly<Record<string, unknown>>): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attrs)) if (allowed(k, v)) out[k] = v as string | number | boolean;
  return out;
}

/** `value` if it is allowed for `key`, else `fallback` (metric labels, which must always be set, pass here). */
export function label(key: AttrKey, value: unknown, fallback: string): string {
  return typeof value === 'string' && allowed(key, value) ? value : fallback;
}
