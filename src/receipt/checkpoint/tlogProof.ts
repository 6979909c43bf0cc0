import { decodeBase64Strict, encodeBase64 } from '../note/base64.js';
import { isTreeCount, parseDecimal } from './decimal.js';
import { TallyError } from '../../protocol/errors.js';
import { fromBase64Ascii } from '../../protocol/base64.js';
import { pooledBytes } from '../pool.js';

/** First line of every tlog-proof (https://c2sp.org/tlog-proof). */
export const TLOG_PROOF_HEADER = 'c2sp.org/tlog-proof@v1';
/** Length of one inclusion-proof hash (SHA-256). */
export const PROOF_HASH_BYTES = 32;
/** Most hashes in an inclusion proof: a path in a tree of < 2^64 leaves. */
export const MAX_PROOF_HASHES = 64;

/** A C2SP tlog-proof: an entry index, its inclusion path, and the signed checkpoint it proves against. */
export interface TlogProof {
  /** Zero-based index of the entry in the log. */
  readonly index: number;
  /** RFC 6962 inclusion path, leaf's sibling first, up to the root's child. */
  readonly proof: readonly Uint8Array[];
  /** The signed checkpoint note, verbatim (ends in `\n`). */
  readonly signedCheckpoint: string;
  /** Optional opaque, UNAUTHENTICATED application data. */
  readonly extraData?: Uint8Array;
}

/** Every reason `parseTlogProof` can reject a text. */
export const TLOG_PROOF_CODES = [
  /** First line is not `c2sp.org/tlog-proof@v1`. */
  'bad-header',
  /** `extra` line whose data is not canonical base64. */
  'bad-extra',
  /** No `index <n>` line, or n not a decimal without leading zeros. */
  'bad-index',
  /** Index above 2^53 − 1. */
  'index-out-of-range',
  /** A proof line that is not canonical base64 of 32 bytes. */
  'bad-proof-hash',
  /** More than 64 proof hashes. */
  'proof-too-long',
  /** No blank line after the proof, or no newline-terminated checkpoint after it. */
  'missing-checkpoint',
] as const;

/** Why `parseTlogProof` rejected a text. */
export type TlogProofCode = (typeof TLOG_PROOF_CODES)[number];

/** Outcome of `parseTlogProof`. */
export type ParseTlogProofResult =
  | { readonly ok: true; readonly tlogProof: TlogProof }
  | { readonly ok: false; readonly code: TlogProofCode; readonly message: string };

function invalid(message: string): TallyError {
  return new TallyError('TALLY_TLOG_PROOF_INVALID', message);
}

function isCheckpointText(s: string): boolean {
  return s.length > 0 && s.endsWith('\n') && !s.startsWith('\n');
}

/** One proof line: 44 base64 characters (32 bytes) and its newline. */
const PROOF_LINE = 45;
const encoder = new TextEncoder();
const proofBytes = new Uint8Array(MAX_PROOF_HASHES * PROOF_LINE);

/**
 * The proof lines that start at `pos`, when all of them are well formed: the
 * characters up to the first blank line go through one native ASCII pass and
 * each hash is decoded from those bytes (no string and no encoder call per
 * line). `undefined` for anything else — the line-by-line loop of
 * {@link parseTlogProof} then finds and names the problem, so this path
 * accepts exactly what that loop accepts and rejects nothing itself.
 */
function proofLines(text: string, pos: number): { proof: Uint8Array[]; next: number } | undefined {
  // text[pos - 1] ends the index line: the first "\n\n" from there ends the proof lines.
  const blank = text.indexOf('\n\n', pos - 1);
  const n = blank + 1 - pos;
  if (blank < 0 || n > proofBytes.length || n % PROOF_LINE !== 0) return undefined;
  const done = encoder.encodeInto(n === 0 ? '' : text.slice(pos, blank + 1), proofBytes);
  if (done.read !== n || done.written !== n) return undefined;
  const proof: Uint8Array[] = [];
  // The hashes are views into one array (one view each, no array of their own).
  const all = pooledBytes((n / PROOF_LINE) * PROOF_HASH_BYTES);
  let used = 0;
  const slot = (length: number): Uint8Array => {
    // A line that is not 32 bytes is refused below; it gets an array of its own, never more than its slot.
    if (length !== PROOF_HASH_BYTES) return new Uint8Array(length);
    const view = new Uint8Array(all.buffer, all.byteOffset + used, length);
    used += length;
    return view;
  };
  for (let at = 0; at < n; at += PROOF_LINE) {
    if (proofBytes[at + PROOF_LINE - 1] !== 0x0a) return undefined;
    const h = fromBase64Ascii(proofBytes, at, at + PROOF_LINE - 1, slot);
    if (h === undefined || h.length !== PROOF_HASH_BYTES) return undefined;
    proof.push(h);
  }
  return { proof, next: blank + 2 };
}

/**
 * The tlog-proof text:
 * `c2sp.org/tlog-proof@v1\n` [`extra <base64>\n`] `index <n>\n` (`<base64 hash>\n`)* `\n` signedCheckpoint.
 * Throws `TALLY_TLOG_PROOF_INVALID` for a bad index, a hash that is not 32
 * bytes, more than 64 hashes or a checkpoint that is empty, starts with a blank
 * line or does not end in `\n`.
 *
 * @example
 * formatTlogProof({ index: 0, proof: [], signedCheckpoint })
 * // 'c2sp.org/tlog-proof@v1\nindex 0\n\n' + signedCheckpoint
 */
export function formatTlogProof(input: TlogProof): string {
  const { index, proof, signedCheckpoint, extraData } = input;
  if (!isTreeCount(index)) throw invalid('Index must be a non-negative safe integer.');
  if (!Array.isArray(proof) || proof.length > MAX_PROOF_HASHES) throw invalid(`Proof must be an array of at most ${MAX_PROOF_HASHES} hashes.`);
  if (typeof signedCheckpoint !== 'string' || !isCheckpointText(signedCheckpoint)) {
    throw invalid('Signed checkpoint must be non-empty, start with its origin and end with a newline.');
  }
  let out = `${TLOG_PROOF_HEADER}\n`;
  if (extraData !== undefined) {
    if (!(extraData instanceof Uint8Array)) throw invalid('Extra data must be bytes.');
    out += `extra ${encodeBase64(extraData)}\n`;
  }
  out += `index ${index}\n`;
  for (const h of proof) {
    if (!(h instanceof Uint8Array) || h.length !== PROOF_HASH_BYTES) throw invalid(`Every proof hash must be ${PROOF_HASH_BYTES} bytes.`);
    out += `${encodeBase64(h)}\n`;
  }
  return `${out}\n${signedCheckpoint}`;
}

/**
 * Parses a tlog-proof strictly: exact header; optional `extra <canonical
 * base64>`; `index <decimal, no leading zeros>`; zero to 64 lines of canonical
 * base64 of 32 bytes; one empty line; the rest is the signed checkpoint,
 * returned verbatim (it must be non-empty, not start with a blank line and end
 * with `\n`; open it with `openNote` and `parseCheckpoint`). Does not verify
 * anything. `formatTlogProof(parsed) === text` for every accepted text.
 *
 * @example
 * const r = parseTlogProof(text);
 * if (r.ok) openNote(r.tlogProof.signedCheckpoint, [engineVerifierKey]);
 */
export function parseTlogProof(text: string): ParseTlogProofResult {
  const fail = (code: TlogProofCode, message: string): ParseTlogProofResult => ({ ok: false, code, message });
  if (typeof text !== 'string') return fail('bad-header', 'tlog-proof must be text');
  let pos = 0;
  const nextLine = (): string | undefined => {
    const nl = text.indexOf('\n', pos);
    if (nl < 0) return undefined;
    const line = text.slice(pos, nl);
    pos = nl + 1;
    return line;
  };

  if (nextLine() !== TLOG_PROOF_HEADER) return fail('bad-header', `first line must be ${TLOG_PROOF_HEADER}`);
  let line = nextLine();
  let extraData: Uint8Array | undefined;
  if (line !== undefined && line.startsWith('extra ')) {
    extraData = decodeBase64Strict(line.slice('extra '.length), pooledBytes);
    if (extraData === undefined) return fail('bad-extra', 'extra data must be canonical base64');
    line = nextLine();
  }
  if (line === undefined || !line.startsWith('index ')) return fail('bad-index', 'missing "index <n>" line');
  const index = parseDecimal(line.slice('index '.length));
  if (!index.ok) {
    return index.reason === 'range'
      ? fail('index-out-of-range', 'index is above 2^53 - 1')
      : fail('bad-index', 'index must be a decimal without leading zeros');
  }
  let proof: Uint8Array[];
  const fast = proofLines(text, pos);
  if (fast !== undefined) {
    proof = fast.proof;
    pos = fast.next;
  } else {
    proof = [];
    for (;;) {
      line = nextLine();
      if (line === undefined) return fail('missing-checkpoint', 'no blank line before the checkpoint');
      if (line === '') break;
      const h = decodeBase64Strict(line);
      if (h === undefined || h.length !== PROOF_HASH_BYTES) return fail('bad-proof-hash', `proof line ${proof.length + 1} is not canonical base64 of 32 bytes`);
      if (proof.length === MAX_PROOF_HASHES) return fail('proof-too-long', `more than ${MAX_PROOF_HASHES} proof hashes`);
      proof.push(h);
    }
  }
  const signedCheckpoint = text.slice(pos);
  if (!isCheckpointText(signedCheckpoint)) return fail('missing-checkpoint', 'checkpoint must follow the blank line and end with a newline');
  const tlogProof: TlogProof = extraData === undefined ? { index: index.value, proof, signedCheckpoint } : { index: index.value, proof, signedCheckpoint, extraData };
  return { ok: true, tlogProof };
}
