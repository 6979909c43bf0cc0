import { splitSignatureLines } from './cosignature/cosign.js';
import { TLOG_SIZE_CONTENT_TYPE } from './http.js';

/** What a witness answered to one `add-checkpoint` submission. */
export type SubmitResult =
  | { readonly kind: 'cosigned'; readonly lines: readonly string[] }
  | { readonly kind: 'conflict'; readonly size: number }
  /**
   * A 409 with no size body (not `text/x.tlog.size`): the witness says the
   * submission conflicts with what it cosigned without saying its size.
   * Witnesses written before C2SP/C2SP#280 answered a second root at the size
   * they hold this way; the current spec answers that with 422 (`refused`,
   * status 422) and gives every 409 the size body.
   */
  | { readonly kind: 'conflict-unsized'; readonly message: string }
  | { readonly kind: 'refused'; readonly status: number; readonly message: string }
  | { readonly kind: 'unreachable'; readonly message: string };

/** Options of {@link submitCheckpoint}. */
export interface SubmitOptions {
  /** Give up after this many milliseconds (default 5000). */
  readonly timeoutMs?: number;
}

/**
 * POSTs an `add-checkpoint` body to a witness (`url` is the submission
 * prefix; `/add-checkpoint` is appended) and classifies the answer: a 200
 * must be signature lines only, a 409 exactly `<decimal>\n` with content type
 * `text/x.tlog.size` (a `conflict` with that size), a 409 of another content
 * type a `conflict-unsized` (C2SP tlog-witness: 409 means the old size is not
 * what the witness cosigned; a witness that omits the size still says that);
 * a 409 that claims `text/x.tlog.size` but breaks it, and anything else, is
 * `refused` (with the status: a 422 is a bad proof or, to `old` = size,
 * another root at the size the witness cosigned), and a network error or
 * timeout `unreachable`.
 * Never throws.
 *
 * @example
 * const r = await submitCheckpoint('http://127.0.0.1:8080', body);
 * if (r.kind === 'conflict') retryFrom(r.size);
 */
export async function submitCheckpoint(url: string, body: string, options: SubmitOptions = {}): Promise<SubmitResult> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${url.replace(/\/+$/, '')}/add-checkpoint`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
    });
    text = await res.text();
  } catch (e) {
    return { kind: 'unreachable', message: e instanceof Error ? e.message : String(e) };
  }
  if (res.status === 200) {
    const lines = splitSignatureLines(text);
    return lines === undefined ? { kind: 'refused', status: 200, message: 'answer is not signature lines' } : { kind: 'cosigned', lines };
  }
  if (res.status === 409) {
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    const m = /^(0|[1-9][0-9]{0,15})\n$/.exec(text);
    if (type === TLOG_SIZE_CONTENT_TYPE && m && Number.isSafeInteger(Number(m[1]))) return { kind: 'conflict', size: Number(m[1]) };
    if (type === TLOG_SIZE_CONTENT_TYPE) return { kind: 'refused', status: 409, message: 'malformed 409 answer: text/x.tlog.size that is not one decimal line' };
    return { kind: 'conflict-unsized', message: text.slice(0, 200).trim() };
  }
  return { kind: 'refused', status: res.status, message: text.slice(0, 200).trim() };
}
