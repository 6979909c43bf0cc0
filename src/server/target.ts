/**
 * The request target of an HTTP/1.1 request (RFC 9112 §3.2), read once per
 * request: origin-form (`/path?query`) or absolute-form
 * (`http://host/path?query`). Anything else — a target that no URL parser
 * accepts (`http://[/`, a port above 65535), asterisk- or authority-form —
 * is `undefined`, answered 400 `malformed-target` before any auth. An
 * origin-form target must follow RFC 3986's grammar (`/` segments of pchars,
 * an optional query): `//[` is refused, not guessed at. The path is
 * normalized the way the router sees it (`/a/../rpc` is `/rpc`), so the
 * envelope of a refusal follows the route, not the spelling.
 */

/** A parsed request target. */
export interface RequestTarget {
  /** The normalized path (`/rpc`, `/sessions/…/bundle`). */
  readonly path: string;
  readonly query: URLSearchParams;
}

// RFC 3986 pchar; '/' is not one, so each segment starts unambiguously (linear match).
const PCHAR = "[A-Za-z0-9\\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2}";
const ORIGIN_FORM = new RegExp(`^(?:/(?:${PCHAR})*)+(?:\\?(?:${PCHAR}|[/?])*)?$`);
const ABSOLUTE_FORM = /^https?:\/\//i;

/**
 * Parses a raw request target.
 *
 * @example
 * parseTarget('/a/../rpc?x=1')?.path; // '/rpc'
 * parseTarget('http://a:99999/'); // undefined
 */
export function parseTarget(raw: string): RequestTarget | undefined {
  let url: URL;
  try {
    if (raw.startsWith('/')) {
      if (!ORIGIN_FORM.test(raw)) return undefined;
      url = new URL(`http://origin.invalid${raw}`);
    } else if (ABSOLUTE_FORM.test(raw)) url = new URL(raw);
    else return undefined;
  } catch {
    return undefined;
  }
  return { path: url.pathname, query: url.searchParams };
}
