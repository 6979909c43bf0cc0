/**
 * The lines of a failed day from its first bad entry on. The chain verifier
 * stops there; the page still lists each later line, marked not verified, so
 * the grader sees where the day breaks and how much of it is untrusted. A
 * line is read only for what it claims to be (kind and ordinal, as text):
 * nothing of it is checked, charted or trusted.
 */
import { concatBytes } from '../../protocol/stream.js';
import type { Row } from './rows.js';

/** Why line `i` of a day whose entry `cut.index` failed is not verified (one wording for file, fetch and live days). */
export function whyUnverified(cut: { readonly index: number; readonly code: string; readonly message: string }): (i: number) => string {
  return (i) => (i === cut.index ? `the first entry that failed verification: ${cut.code}: ${cut.message}` : `after entry ${cut.index}, which failed verification (${cut.code}): nothing from there on is checked`);
}

/** Lines longer than this are listed but not read for their claims. */
const MAX_CLAIM_BYTES = 1 << 20;

/** What an unverified line claims to be, in words (untrusted text, cut short). */
export function claimsOf(line: Uint8Array | undefined): string {
  if (line === undefined) return 'a line too long to read';
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(line));
  } catch {
    return 'not a JSON line';
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not a JSON object';
  const o = v as Record<string, unknown>;
  const kind = typeof o['kind'] === 'string' ? o['kind'].slice(0, 40) : undefined;
  if (kind === undefined) return 'an object without a kind';
  return `claims: ${kind}${typeof o['ordinal'] === 'number' ? ` ${o['ordinal']}` : ''}`;
}

/**
 * The rows of the lines of `blob` from byte `start` on (the first numbered
 * `first`), each marked with `why` of its index; `offsets` gets each line's byte offset.
 */
export async function unverifiedRows(blob: Blob, start: number, first: number, why: (i: number) => string, offsets: number[]): Promise<Row[]> {
  const rows: Row[] = [];
  const reader = blob.slice(start).stream().getReader();
  let pending: Uint8Array[] = [];
  let pendingLen = 0;
  let at = start;
  const emit = (line: Uint8Array | undefined, length: number): void => {
    offsets.push(at);
    rows.push({ i: first + rows.length, kind: 'unverified', hash: '', bytes: length, outcome: 'unverified', unverified: { why: why(first + rows.length), claims: claimsOf(line) } });
    at += length + 1;
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    let from = 0;
    for (let nl = value.indexOf(0x0a); nl >= 0; nl = value.indexOf(0x0a, from)) {
      const piece = value.subarray(from, nl);
      const n = pendingLen + piece.length;
      // Only what the claim reader may read is kept: a longer line is listed by its length alone.
      emit(n > MAX_CLAIM_BYTES ? undefined : pendingLen === 0 ? piece : concatBytes([...pending, piece], n), n);
      pending = [];
      pendingLen = 0;
      from = nl + 1;
    }
    if (from < value.length) {
      const rest = value.subarray(from);
      if (pendingLen + rest.length <= MAX_CLAIM_BYTES) pending.push(rest.slice());
      pendingLen += rest.length;
    }
  }
  if (pendingLen > 0) emit(pendingLen > MAX_CLAIM_BYTES ? undefined : concatBytes(pending, pendingLen), pendingLen);
  return rows;
}
