/**
 * Request bodies: read by the protocol's one strict parser (`parseStrictJson`):
 * strict UTF-8, no BOM, no duplicate member names, no lone surrogates, and the
 * nesting-depth limit (outermost container = level 1) enforced while parsing,
 * so a hostile `[[[[…` never reaches a recursive consumer.
 */
import { parseStrictJson } from '../protocol/index.js';

/**
 * True when `text` nests arrays/objects deeper than `max` (brackets inside
 * strings are ignored; the outermost container is level 1, the counting rule
 * of the strict parser). Linear, no recursion.
 *
 * @example
 * nestsDeeperThan('[[1]]', 1); // true
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped char
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** Outcome of {@link parseJsonBody}. */
export type ParsedBody = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly type: 'parse-error' | 'too-deep'; readonly message: string };

/**
 * Decodes and parses a request body with a depth limit. `too-deep` when it
 * nests past `maxDepth`; every other refusal of the strict parser (invalid
 * UTF-8, a BOM, a duplicate key, a lone surrogate, trailing data, a syntax
 * error) is a `parse-error` whose message names it.
 */
export function parseJsonBody(bytes: Uint8Array, maxDepth: number): ParsedBody {
  const r = parseStrictJson(bytes, { maxDepth });
  if (r.ok) return { ok: true, value: r.value };
  if (r.code === 'too-deep') return { ok: false, type: 'too-deep', message: `the JSON nests deeper than ${maxDepth} levels` };
  if (r.code === 'invalid-utf8') return { ok: false, type: 'parse-error', message: 'the body is not valid UTF-8' };
  return { ok: false, type: 'parse-error', message: `the body is not strict JSON (${r.code}): ${r.message}` };
}
