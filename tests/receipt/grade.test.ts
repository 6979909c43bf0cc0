import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import {
  formatGradeText,
  formatPrivateKey,
  generateEngineKey,
  openSessionCheckpoint,
  sessionCheckpointText,
  signNote,
  gradeBundle,
  parseGradeText,
  parsePrivateKey,
  signGrade,
  verifyGrade,
  verifyGradeForBundle,
  type GradeStatement,
  type VerifyGradeResult,
} from '../../src/receipt/index.js';
import { fromHex, type CanonicalObject } from '../../src/protocol/index.js';
import { runDay } from '../helpers/day.js';
import { entriesOf, reseal } from './fixtures.js';

const grader = generateEngineKey('grader.example');
const day = await runDay({ name: 'graded-day', wakes: 4 });
const other = await runDay({ name: 'other-day', wakes: 4 });
const receipt = day.receipt!;
const statement: GradeStatement = { sessionId: receipt.sessionId, size: receipt.size, receiptRoot: receipt.receiptRoot, grade: { score: 87, rubric: 'desk-v3', notes: 'held risk; café ✓' } };
const outcome = (r: VerifyGradeResult | { ok: false; stage: 'chain'; code: string }) => (r.ok ? 'ok' : `${r.stage}/${r.code}`);

describe('grade text (the signed bytes)', () => {
  it('golden: the exact five lines', () => {
    const text = formatGradeText({ sessionId: 'ab'.repeat(32), size: 10, receiptRoot: 'cd'.repeat(32), grade: { z: 'last', a: [1, true, 'é'] } });
    expect(text).toBe(`tally/v1/grade\nsession ${'ab'.repeat(32)}\nsize 10\nroot ${'cd'.repeat(32)}\ngrade {"a":[1,true,"é"],"z":"last"}\n`);
  });

  it('round-trips any canonical payload, and rejects non-canonical spellings (seed 0x9ade)', () => {
    const payload = fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean()), { maxKeys: 6 });
    fc.assert(
      fc.property(payload, fc.integer({ min: 1, max: 2 ** 40 }), (grade, size) => {
        const s = { ...statement, size, grade: grade as CanonicalObject };
        const text = formatGradeText(s);
        const back = parseGradeText(text);
        expect(back.ok && formatGradeText(back.statement)).toBe(text);
      }),
      { seed: 0x9ade, numRuns: 200 },
    );
    const text = formatGradeText(statement);
    expect(parseGradeText(text.replace('{"notes"', '{ "notes"'))).toMatchObject({ ok: false, code: 'bad-payload' });
    expect(parseGradeText(text.replace(`size ${receipt.size}`, `size 0${receipt.size}`))).toMatchObject({ ok: false, code: 'bad-size' });
    expect(parseGradeText(text.replace('root ', 'root  '))).toMatchObject({ ok: false, code: 'bad-root' });
    expect(parseGradeText(text.replace('tally/v1/grade', 'tally/v2/grade'))).toMatchObject({ ok: false, code: 'not-a-grade' });
    expect(parseGradeText(`${text}extra\n`)).toMatchObject({ ok: false, code: 'not-a-grade' });
    expect(() => formatGradeText({ ...statement, grade: [] as unknown as CanonicalObject })).toThrow(/object/);
    expect(() => formatGradeText({ ...statement, grade: { x: 1.5 } })).toThrow(/canonical/);
    expect(() => formatGradeText({ ...statement, size: 0 })).toThrow(/size/);
    expect(() => formatGradeText({ ...statement, receiptRoot: 'AB'.repeat(32) })).toThrow(/root/);
  });
});

describe('certified grades', () => {
  it('a grade verifies with the grader key and pins exactly its transcript', async () => {
    const note = signGrade(statement, [grader]);
    const r = verifyGrade(note, { verifiers: [grader.verifierKey], transcript: receipt });
    expect(r.ok && r.statement.grade).toEqual(statement.grade);
    expect(outcome(await verifyGradeForBundle(note, [day.bundle], { verifiers: [grader.verifierKey] }))).toBe('ok');
  });

  it('fails for any other transcript: another day, a re-sealed edit, a prefix', async () => {
    const note = signGrade(statement, [grader]);
    expect(outcome(await verifyGradeForBundle(note, [other.bundle], { verifiers: [grader.verifierKey] }))).toBe('transcript/other-transcript');
    const forged = reseal(entriesOf(day.lines).map((e) => (e.kind === 'finalize' ? { ...e, artifacts: { note: 'improved' } } : e)));
    expect(outcome(await verifyGradeForBundle(note, [forged.bundle], { verifiers: [grader.verifierKey] }))).toBe('transcript/other-transcript');
    const prefix = encodeBundle(day.lines.slice(0, -1));
    expect(outcome(await verifyGradeForBundle(note, [prefix], { verifiers: [grader.verifierKey] }))).toBe('chain/not-sealed');
    expect(outcome(verifyGrade(note, { verifiers: [grader.verifierKey], transcript: { ...receipt, size: receipt.size - 1 } }))).toBe('transcript/other-transcript');
    expect(outcome(verifyGrade(note, { verifiers: [grader.verifierKey], transcript: other.receipt! }))).toBe('transcript/other-transcript');
  });

  it('fails for another grader, an edited grade or score, and a checkpoint posing as a grade', () => {
    const note = signGrade(statement, [grader]);
    expect(outcome(verifyGrade(note, { verifiers: [generateEngineKey('grader.example').verifierKey] }))).toBe('note/no-pinned-signature');
    expect(outcome(verifyGrade(note.replace('"score":87', '"score":97'), { verifiers: [grader.verifierKey] }))).toBe('note/bad-signature');
    // A checkpoint signed with the grader key is not a grade, and a grade never opens as a checkpoint.
    const checkpoint = signNote(sessionCheckpointText(grader.name, receipt.sessionId, receipt.size, fromHex(receipt.receiptRoot)), [grader]);
    expect(outcome(verifyGrade(checkpoint, { verifiers: [grader.verifierKey] }))).toBe('grade/not-a-grade');
    const asCheckpoint = openSessionCheckpoint(note, [grader.verifierKey]);
    expect(!asCheckpoint.ok && `${asCheckpoint.stage}/${asCheckpoint.code}`).toBe('checkpoint/bad-size');
  });

  it('gradeBundle signs for the verified bundle; a PRIVATE+KEY grader key works as is', async () => {
    const fromText = parsePrivateKey(formatPrivateKey(grader));
    const r = await gradeBundle([day.bundle], { pass: true }, [fromText]);
    expect(r.ok && r.statement).toEqual({ sessionId: receipt.sessionId, size: receipt.size, receiptRoot: receipt.receiptRoot, grade: { pass: true } });
    expect(r.ok && outcome(verifyGrade(r.note, { verifiers: [grader.verifierKey], transcript: receipt }))).toBe('ok');
    expect(await gradeBundle([day.bundle.subarray(1)], { pass: true }, [grader])).toMatchObject({ ok: false, stage: 'chain' });
  });
});
