import { decodeBase64Strict, encodeBase64 } from '../note/base64.js';
import { hasLoneSurrogate } from '../note/name.js';
import { isTreeCount, parseDecimal } from './decimal.js';
import { isValidOrigin } from './origin.js';
import { TallyError } from '../../protocol/errors.js';

/** Length of an RFC 6962 SHA-256 root hash. */
export const ROOT_HASH_BYTES = 32;

/** The note text of a C2SP tlog-checkpoint. */
export interface Checkpoint {
  /** First line: the log's identity (see `checkpointOrigin`). */
  readonly origin: string;
  /** Number of leaves in the tree. */
  readonly size: number;
  /** RFC 6962 Merkle tree hash of the first `size` leaves (32 bytes). */
  readonly root: Uint8Array;
  /** Optional opaque extension lines (non-empty, without the newline). */
  readonly extensions: readonly string[];
}

/** Input of `formatCheckpoint`. */
export interface CheckpointInput {
  readonly origin: string;
  readonly size: number;
  readonly root: Uint8Array;
  readonly extensions?: readonly string[];
}

/** Every reason `parseCheckpoint` can reject a checkpoint text. */
export const CHECKPOINT_CODES = [
  /** Not newline-terminated lines, fewer than three lines, a control character or bad Unicode. */
  'malformed-checkpoint',
  /** Origin empty or with leading/trailing white space. */
  'bad-origin',
  /** Tree size not a plain decimal (sign, leading zero, other characters). */
  'bad-size',
  /** Tree size above 2^53 − 1. */
  'size-out-of-range',
  /** Root hash not canonical base64 of exactly 32 bytes. */
  'bad-root-hash',
  /** An empty extension line. */
  'bad-extension',
] as const;

/** Why `parseCheckpoint` rejected a text. */
export type CheckpointCode = (typeof CHECKPOINT_CODES)[number];

/** Outcome of `parseCheckpoint`. */
export type ParseCheckpointResult =
  | { readonly ok: true; readonly checkpoint: Checkpoint }
  | { readonly ok: false; readonly code: CheckpointCode; readonly message: string };

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f]/;

function invalid(message: string, details?: string): TallyError {
  return new TallyError('TALLY_CHECKPOINT_INVALID', message, details === undefined ? {} : { details });
}

/**
 * The checkpoint note text: `origin\n size\n base64(root)\n [extension\n]*`.
 * Throws `TALLY_CHECKPOINT_INVALID` for an origin `isValidOrigin` rejects, a
 * size that is not a non-negative safe integer, a root that is not 32 bytes or
 * an empty / multi-line extension.
 *
 * @example
 * formatCheckpoint({ origin: 'tally.example/acme/' + sid, size: 3, root })
 * // 'tally.example/acme/<sid>\n3\n<base64 root>\n'
 */
export function formatCheckpoint(input: CheckpointInput): string {
  const { origin, size, root, extensions = [] } = input;
  if (!isValidOrigin(origin)) throw invalid('Checkpoint origin must be non-empty, one line, without leading or trailing space.', JSON.stringify(origin));
  if (!isTreeCount(size)) throw invalid('Checkpoint size must be a non-negative safe integer.', String(size));
  if (!(root instanceof Uint8Array) || root.length !== ROOT_HASH_BYTES) throw invalid(`Checkpoint root must be ${ROOT_HASH_BYTES} bytes.`);
  let out = `${origin}\n${size}\n${encodeBase64(root)}\n`;
  for (const ext of extensions) {
    if (typeof ext !== 'string' || ext.length === 0 || CONTROL.test(ext) || hasLoneSurrogate(ext)) {
      throw invalid('Checkpoint extension lines must be non-empty single lines without control characters.', JSON.stringify(ext));
    }
    out += `${ext}\n`;
  }
  return out;
}

/**
 * Parses a checkpoint note text strictly: every line ends in `\n`; at least
 * three lines; origin as `isValidOrigin`; size decimal without leading zeros
 * (`0` allowed) and at most 2^53 − 1; root canonical padded base64 of 32 bytes;
 * extension lines non-empty. No control characters anywhere but the newlines.
 * `formatCheckpoint(parsed) === text` for every accepted text.
 *
 * @example
 * const r = parseCheckpoint(opened.text);
 * if (r.ok) r.checkpoint.size;
 */
export function parseCheckpoint(text: string): ParseCheckpointResult {
  const fail = (code: CheckpointCode, message: string): ParseCheckpointResult => ({ ok: false, code, message });
  if (typeof text !== 'string' || !text.endsWith('\n')) return fail('malformed-checkpoint', 'checkpoint text must end with a newline');
  if (hasLoneSurrogate(text)) return fail('malformed-checkpoint', 'checkpoint text is not well-formed Unicode');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) return fail('malformed-checkpoint', 'checkpoint needs origin, size and root hash lines');
  if (lines.some((l) => CONTROL.test(l))) return fail('malformed-checkpoint', 'checkpoint contains a control character');
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  if (!isValidOrigin(origin)) return fail('bad-origin', 'origin must be non-empty without leading or trailing white space');
  const size = parseDecimal(sizeText);
  if (!size.ok) {
    return size.reason === 'range'
      ? fail('size-out-of-range', `tree size ${sizeText} is above 2^53 - 1`)
      : fail('bad-size', `tree size ${JSON.stringify(sizeText)} is not a decimal without leading zeros`);
  }
  const root = decodeBase64Strict(rootText);
  if (root === undefined || root.length !== ROOT_HASH_BYTES) return fail('bad-root-hash', 'root hash must be canonical base64 of 32 bytes');
  if (extensions.some((e) => e.length === 0)) return fail('bad-extension', 'extension lines must be non-empty');
  return { ok: true, checkpoint: { origin, size: size.value, root, extensions } };
}
