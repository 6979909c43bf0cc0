/**
 * The one gate every span attribute and metric label passes: a fixed set of
 * keys, each with the exact shape its value may have. Anything else (a token
 * pasted where a session id belongs, authored bytes, a judge's message) is
 * dropped, never truncated or escaped: telemetry carries identifiers, counts
 * and vocabulary words, and no secret or authored byte can match those shapes.
 */
import type { Attributes } from '@opentelemetry/api';
import { ATTR, type AttrKey } from './names.js';

const HEX64 = /^[0-9a-f]{64}$/;
/** Vocabulary words: ruling codes, diagnostics, outcomes, error kinds, models, routes. */
const WORD = /^[A-Za-z][A-Za-z0-9_.:/{}-]{0,63}$/;

type Shape = 'hex64' | 'int' | 'word' | 'bool';

const SHAPES: Readonly<Record<AttrKey, Shape>> = {
  [ATTR.session]: 'hex64',
  [ATTR.ordinal]: 'int',
  [ATTR.index]: 'int',
  [ATTR.outcome]: 'word',
  [ATTR.ruling]: 'word',
  [ATTR.diagnostic]: 'word',
  [ATTR.duplicate]: 'bool',
  [ATTR.verb]: 'word',
  [ATTR.batch]: 'int',
  [ATTR.storeOutcome]: 'word',
  [ATTR.errorKind]: 'word',
  [ATTR.model]: 'word',
  [ATTR.failure]: 'word',
  [ATTR.entries]: 'int',
  [ATTR.route]: 'word',
  [ATTR.method]: 'word',
  [ATTR.status]: 'int',
};

/** True when `value` has the shape allowed for `key`. */
export function allowed(key: string, value: unknown): boolean {
  const shape = (SHAPES as Record<string, Shape | undefined>)[key];
  switch (shape) {
    case 'hex64':
      return typeof value === 'string' && HEX64.test(value);
    case 'int':
      return typeof value === 'number' && Number.isSafeInteger(value) && value >= -1;
    case 'word':
      return typeof value === 'string' && WORD.test(value);
    case 'bool':
      return typeof value === 'boolean';
    default:
      return false;
  }
}

/** The entries of `attrs` that pass {@link allowed}; the rest are dropped. */
export function safeAttributes(attrs: Readonly<Record<string, unknown>>): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attrs)) if (allowed(k, v)) out[k] = v as string | number | boolean;
  return out;
}

/** `value` if it is a vocabulary word, else `fallback` (for metric labels, which must always be set). */
export function word(value: unknown, fallback: string): string {
  return typeof value === 'string' && WORD.test(value) ? value : fallback;
}
