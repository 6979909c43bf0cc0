/**
 * THE byte rules of Tally's receipts, above the C2SP primitives (the note
 * signature bytes themselves live in `note/layout.ts`). Every text this layer
 * signs or hashes is assembled here and nowhere else (docs/PROTOCOL.md §11
 * specifies the same bytes in prose):
 *
 * - session checkpoint (a C2SP tlog-checkpoint note text):
 *   `<engineName>/<sessionId hex>\n<size>\n<base64 RFC 6962 root of the first size entries>\n`
 * - turn receipt (a C2SP tlog-proof): `extra` = the entry's canonical bytes,
 *   whose leaf hash is `SHA-256(0x00 ‖ extra)` (= the entry hash)
 * - grade (a signed-note text):
 *   `tally/v1/grade\nsession <hex>\nsize <n>\nroot <hex>\ngrade <canonical JSON object>\n`
 */
import { sha256 } from '../codec/sha256.js';
import { entryHash, isDigestHex, parseStrictJson, toHex, tryCanonicalJson, type CanonicalObject } from '../protocol/index.js';
import { TallyError } from '../protocol/errors.js';
import { formatCheckpoint } from './checkpoint/checkpoint.js';
import { parseDecimal } from './checkpoint/decimal.js';
import { checkpointOrigin } from './checkpoint/origin.js';

/** First line of every grade text; it can never be a Tally checkpoint origin (those end in `/<64 hex>`). */
export const GRADE_HEADER = 'tally/v1/grade';
/** Largest grade payload (its canonical JSON, in UTF-8 bytes). */
export const MAX_GRADE_PAYLOAD_BYTES = 65_536;

const encoder = new TextEncoder();

/**
 * RFC 6962 leaf hash of an entry's canonical bytes, `SHA-256(0x00 ‖ bytes)`:
 * the entry hash, and the leaf of every Tally Merkle tree.
 *
 * @example
 * toHex(entryLeafHash(genesisBytes)) === sessionId  // true
 */
export function entryLeafHash(entryBytes: Uint8Array): Uint8Array {
  return entryHash(sha256, entryBytes);
}

/**
 * The note text of a session checkpoint: origin `<engineName>/<sessionId>`,
 * the tree size and the base64 root. Throws `TALLY_CHECKPOINT_ORIGIN_INVALID` /
 * `TALLY_CHECKPOINT_INVALID` on a bad name, session id, size or root.
 *
 * @example
 * sessionCheckpointText('tally.local', sid, 10, root)
 * // 'tally.local/<sid>\n10\n<base64 root>\n'
 */
export function sessionCheckpointText(engineName: string, sessionId: string, size: number, root: Uint8Array): string {
  return formatCheckpoint({ origin: checkpointOrigin(engineName, sessionId), size, root });
}

export { splitSessionOrigin } from './checkpoint/origin.js';

/**
 * A value for an error message that never runs caller code: numbers and
 * short strings as themselves, anything else by its type (a Proxy or an
 * object with a throwing `toString` cannot break or hijack the message).
 */
export function describeValue(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (typeof v === 'string') return v.length <= 80 ? JSON.stringify(v) : `${JSON.stringify(v.slice(0, 80))}…`;
  return v === null ? 'null' : typeof v;
}

/** What a grade pins, and the grade itself. */
export interface GradeStatement {
  /** Session id (64 hex): the genesis entry hash. */
  readonly sessionId: string;
  /** Number of entries in the graded transcript (the seal included). */
  readonly size: number;
  /** RFC 6962 root over all `size` entries (64 hex): the receipt root. */
  readonly receiptRoot: string;
  /** The grade payload: any canonical JSON object (score, rubric, grader notes…). */
  readonly grade: CanonicalObject;
}

function gradeError(message: string, details?: string): TallyError {
  return new TallyError('TALLY_GRADE_INVALID', message, details === undefined ? {} : { details });
}

/**
 * The grade note text (see the module comment). Throws `TALLY_GRADE_INVALID`
 * for a bad session id or root (not 64 lowercase hex), a size that is not a
 * positive safe integer, or a payload that is not a canonical JSON object of
 * at most 64 KiB.
 *
 * @example
 * formatGradeText({ sessionId, size: 10, receiptRoot, grade: { score: 87 } })
 * // 'tally/v1/grade\nsession <sid>\nsize 10\nroot <hex>\ngrade {"score":87}\n'
 */
export function formatGradeText(statement: GradeStatement): string {
  const { sessionId, size, receiptRoot, grade } = statement;
  if (!isDigestHex(sessionId)) throw gradeError('Grade session id must be 64 lowercase hex characters.');
  if (!isDigestHex(receiptRoot)) throw gradeError('Grade receipt root must be 64 lowercase hex characters.');
  if (!Number.isSafeInteger(size) || size < 1) throw gradeError('Grade size must be a positive safe integer.', describeValue(size));
  if (typeof grade !== 'object' || grade === null || Array.isArray(grade)) throw gradeError('Grade payload must be a JSON object.');
  const c = tryCanonicalJson(grade);
  if (!c.ok) throw gradeError('Grade payload is not canonical JSON.', `${c.problem.code} at ${c.problem.path || '/'}`);
  if (encoder.encode(c.text).length > MAX_GRADE_PAYLOAD_BYTES) throw gradeError(`Grade payload exceeds ${MAX_GRADE_PAYLOAD_BYTES} bytes.`);
  return `${GRADE_HEADER}\nsession ${sessionId}\nsize ${size}\nroot ${receiptRoot}\ngrade ${c.text}\n`;
}

/** Every reason `parseGradeText` rejects a text. */
export const GRADE_TEXT_CODES = ['not-a-grade', 'bad-session', 'bad-size', 'bad-root', 'bad-payload'] as const;
/** Why `parseGradeText` rejected a text. */
export type GradeTextCode = (typeof GRADE_TEXT_CODES)[number];

/** Outcome of `parseGradeText`. */
export type ParseGradeTextResult =
  | { readonly ok: true; readonly statement: GradeStatement }
  | { readonly ok: false; readonly code: GradeTextCode; readonly message: string };

/**
 * Parses a grade note text strictly: exactly the five lines of
 * `formatGradeText`, each ending in `\n`, the payload canonical JSON.
 * `formatGradeText(parsed) === text` for every accepted text.
 */
export function parseGradeText(text: string): ParseGradeTextResult {
  const fail = (code: GradeTextCode, message: string): ParseGradeTextResult => ({ ok: false, code, message });
  if (typeof text !== 'string' || !text.endsWith('\n')) return fail('not-a-grade', 'grade text must end with a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length !== 5 || lines[0] !== GRADE_HEADER) return fail('not-a-grade', `a grade has exactly five lines and starts with ${GRADE_HEADER}`);
  const [, s, n, r, g] = lines as [string, string, string, string, string];
  const sessionId = s.startsWith('session ') ? s.slice('session '.length) : '';
  if (!isDigestHex(sessionId)) return fail('bad-session', 'line 2 must be "session <64 lowercase hex>"');
  const size = n.startsWith('size ') ? parseDecimal(n.slice('size '.length)) : undefined;
  if (size === undefined || !size.ok || size.value < 1) return fail('bad-size', 'line 3 must be "size <positive decimal>"');
  const receiptRoot = r.startsWith('root ') ? r.slice('root '.length) : '';
  if (!isDigestHex(receiptRoot)) return fail('bad-root', 'line 4 must be "root <64 lowercase hex>"');
  if (!g.startsWith('grade ')) return fail('bad-payload', 'line 5 must be "grade <canonical JSON object>"');
  const json = g.slice('grade '.length);
  const strict = parseStrictJson(json);
  if (!strict.ok) return fail('bad-payload', `grade payload is not JSON (${strict.code})`);
  const value = strict.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('bad-payload', 'grade payload must be a JSON object');
  const c = tryCanonicalJson(value);
  if (!c.ok || c.text !== json) return fail('bad-payload', 'grade payload is not in canonical JSON');
  if (encoder.encode(json).length > MAX_GRADE_PAYLOAD_BYTES) return fail('bad-payload', `grade payload exceeds ${MAX_GRADE_PAYLOAD_BYTES} bytes`);
  return { ok: true, statement: { sessionId, size: size.value, receiptRoot, grade: value as CanonicalObject } };
}

/** Hex of an entry's leaf hash (its entry hash). */
export function entryHashHex(entryBytes: Uint8Array): string {
  return toHex(entryLeafHash(entryBytes));
}
