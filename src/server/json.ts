/**
 * Request bodies: strict UTF-8, a nesting-depth limit checked BEFORE parsing
 * (so a hostile `[[[[…` never reaches a recursive consumer), then JSON.parse.
 */

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * True when `text` nests arrays/objects deeper than `max` (brackets inside
 * strings are ignored). Linear, no recursion.
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

/** Decodes and parses a request body with a depth limit. */
export function parseJsonBody(bytes: Uint8Array, maxDepth: number): ParsedBody {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { ok: false, type: 'parse-error', message: 'the body is not valid UTF-8' };
  }
  if (nestsDeeperThan(text, maxDepth)) return { ok: false, type: 'too-deep', message: `the JSON nests deeper than ${maxDepth} levels` };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return { ok: false, type: 'parse-error', message: `the body is not JSON: ${(e as Error).message}` };
  }
}
