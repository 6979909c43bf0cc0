import { verifyBundle } from '../../codec/bundle.js';
import type { CanonicalObject, ChainError } from '../../protocol/index.js';
import { formatGradeText, parseGradeText, type GradeStatement, type GradeTextCode } from '../bytes.js';
import { openNote } from '../note/open.js';
import { signNote } from '../note/sign.js';
import type { NoteSignature, NoteSigner, NoteVerifier, OpenNoteCode } from '../note/types.js';
import type { BundleChunks } from '../proof/bundle.js';

/** The exact transcript a grade must pin. */
export interface GradedTranscript {
  readonly sessionId: string;
  readonly size: number;
  readonly receiptRoot: string;
}

/**
 * A certified grade: the grader's C2SP signed note over the grade text
 * (`tally/v1/grade`, session id, tree size, receipt root, canonical JSON
 * payload — see `formatGradeText`). It pins one exact sealed transcript.
 * Throws `TALLY_GRADE_INVALID` on a bad statement and the `TALLY_NOTE_*`
 * errors of `signNote` on bad signers.
 *
 * @example
 * const grader = await loadOrCreateEngineKey('grader.key', 'grader.example');
 * const note = signGrade({ sessionId, size, receiptRoot, grade: { score: 87, rubric: 'v3' } }, [grader]);
 */
export function signGrade(statement: GradeStatement, signers: readonly NoteSigner[]): string {
  return signNote(formatGradeText(statement), signers);
}

/** Outcome of {@link verifyGrade}. */
export type VerifyGradeResult =
  | { readonly ok: true; readonly statement: GradeStatement; readonly signedBy: readonly NoteSignature[]; readonly unverified: readonly NoteSignature[] }
  | { readonly ok: false; readonly stage: 'note'; readonly code: OpenNoteCode; readonly message: string }
  | { readonly ok: false; readonly stage: 'grade'; readonly code: GradeTextCode; readonly message: string }
  | { readonly ok: false; readonly stage: 'transcript'; readonly code: 'other-transcript'; readonly message: string };

/**
 * Verifies a certified grade: signed by a pinned grader key (C2SP rules), a
 * well-formed grade text, and — when `transcript` is given — pinning exactly
 * that transcript (session id, size and receipt root all equal). Never
 * throws on input.
 *
 * @example
 * const r = verifyGrade(note, { verifiers: [graderVkey], transcript: { sessionId, size, receiptRoot } });
 */
export function verifyGrade(
  text: string,
  options: { readonly verifiers: readonly (NoteVerifier | string)[]; readonly transcript?: GradedTranscript },
): VerifyGradeResult {
  const opened = openNote(text, options.verifiers);
  if (!opened.ok) return { ok: false, stage: 'note', code: opened.code, message: opened.message };
  const parsed = parseGradeText(opened.text);
  if (!parsed.ok) return { ok: false, stage: 'grade', code: parsed.code, message: parsed.message };
  const s = parsed.statement;
  const diff = options.transcript && transcriptDiff(s, options.transcript, 'this transcript');
  if (diff) return { ok: false, stage: 'transcript', code: 'other-transcript', message: diff };
  return { ok: true, statement: s, signedBy: opened.verified, unverified: opened.unverified };
}

/**
 * Verifies a grade against a bundle: the grade opens with a pinned grader
 * key, and the bundle verifies (PROTOCOL.md §5, sealed) with exactly the
 * session id, size and receipt root the grade pins. Any other transcript —
 * a different day, one entry more or less, one byte edited — fails.
 *
 * @example
 * const r = await verifyGradeForBundle(note, bundleFileChunks('day.jsonl'), { verifiers: [graderVkey] });
 */
export async function verifyGradeForBundle(
  text: string,
  chunks: BundleChunks,
  options: { readonly verifiers: readonly (NoteVerifier | string)[] },
): Promise<VerifyGradeResult | (ChainError & { readonly stage: 'chain' })> {
  const g = verifyGrade(text, options);
  if (!g.ok) return g;
  const chain = await verifyBundle(chunks);
  if (!chain.ok) return { ...chain, stage: 'chain' };
  const diff = transcriptDiff(g.statement, chain, 'the bundle');
  return diff ? { ok: false, stage: 'transcript', code: 'other-transcript', message: diff } : g;
}

function transcriptDiff(s: GradedTranscript, t: GradedTranscript, what: string): string | undefined {
  if (s.sessionId !== t.sessionId) return `the grade is for session ${s.sessionId}, ${what} is ${t.sessionId}`;
  if (s.size !== t.size) return `the grade is for ${s.size} entries, ${what} has ${t.size}`;
  if (s.receiptRoot !== t.receiptRoot) return `the grade is for receipt root ${s.receiptRoot}, ${what} has ${t.receiptRoot}`;
  return undefined;
}

/**
 * Grades a sealed bundle: verifies it, then signs a grade pinning its
 * session id, size and receipt root. Returns the chain error for a bad bundle.
 *
 * @example
 * const r = await gradeBundle(bundleFileChunks('day.jsonl'), { score: 87 }, [grader]);
 * if (r.ok) writeFileSync('day.grade', r.note);
 */
export async function gradeBundle(
  chunks: BundleChunks,
  grade: CanonicalObject,
  signers: readonly NoteSigner[],
): Promise<{ readonly ok: true; readonly statement: GradeStatement; readonly note: string } | (ChainError & { readonly stage: 'chain' })> {
  const chain = await verifyBundle(chunks);
  if (!chain.ok) return { ...chain, stage: 'chain' };
  const statement: GradeStatement = { sessionId: chain.sessionId, size: chain.size, receiptRoot: chain.receiptRoot, grade };
  return { ok: true, statement, note: signGrade(statement, signers) };
}
