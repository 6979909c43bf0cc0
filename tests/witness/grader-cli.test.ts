/**
 * Graders require witnesses: `tally verify --checkpoint`, `verify-proof` and
 * `grade verify` with `--witness`/`--quorum` or `--policy`, run as a user
 * would (built binary). A day is sealed in process, cosigned by two real
 * in-process witnesses, and written to files.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNotary, formatConsistencyProof, generateEngineKey, signGrade } from '../../src/receipt/index.js';
import { addSignatureLines, cosignerKeyFrom, createWitness, MemoryWitnessStore } from '../../src/witness/index.js';
import { tally } from '../cli/helpers.js';
import { runDay } from '../helpers/day.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-grader-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ws = ['w1.example', 'w2.example'].map((n) => cosignerKeyFrom(generateEngineKey(n)));
const engineKey = generateEngineKey('tally.example/desk');
const run = (args: string[]) => tally(args, { cwd: dir });

beforeAll(async () => {
  const { engine, sid, bundle } = await runDay({ finalize: false });
  const notary = createNotary({ key: engineKey });
  const sealed = await notary.sealWithReceipt(engine, sid);
  if (!sealed.ok) throw new Error(sealed.message);
  const lines: string[] = [];
  for (const key of ws) {
    const w = createWitness({ key, store: new MemoryWitnessStore() });
    await w.trustLogKey(engineKey.verifierKey);
    const r = await w.addCheckpoint(formatConsistencyProof({ oldSize: 0, proof: [], signedCheckpoint: sealed.signedCheckpoint }));
    if (!r.ok) throw new Error(r.message);
    lines.push(r.lines);
  }
  const both = addSignatureLines(sealed.signedCheckpoint, lines);
  const one = addSignatureLines(sealed.signedCheckpoint, [lines[0]!]);
  const all: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) all.push(l);
  const { encodeBundle } = await import('../../src/codec/index.js');
  writeFileSync(join(dir, 'day.jsonl'), encodeBundle(all));
  void bundle;
  writeFileSync(join(dir, 'both.cp'), both);
  writeFileSync(join(dir, 'one.cp'), one);
  for (const [name, cp] of [['both', both], ['one', one]] as const) {
    const r = await notary.turnReceipt(engine, sid, 2, { signedCheckpoint: cp });
    if (!r.ok) throw new Error(r.message);
    writeFileSync(join(dir, `${name}.tlog-proof`), r.text);
  }
  const receipt = sealed.receipt;
  const grader = generateEngineKey('grader.example');
  writeFileSync(join(dir, 'grade.note'), signGrade({ sessionId: receipt.sessionId, size: receipt.size, receiptRoot: receipt.receiptRoot, grade: { score: 9 } }, [grader]));
  writeFileSync(join(dir, 'grader.vkey'), `${grader.verifierKey}\n`);
  const hex = (k: { publicKey: Uint8Array }) => Buffer.from(k.publicKey).toString('hex');
  writeFileSync(join(dir, 'policy'), `witness w1.example ${hex(ws[0]!)}\nwitness w2.example ${hex(ws[1]!)}\ngroup all-of-them all w1.example w2.example\nquorum all-of-them\n`);
}, 60_000);

const W = () => ['--witness', ws[0]!.verifierKey, '--witness', ws[1]!.verifierKey];

describe('tally verify --checkpoint with witnesses', () => {
  it('2 of 2 cosigned: valid, names the cosigners', () => {
    const r = run(['verify', 'day.jsonl', '--vkey', engineKey.verifierKey, '--checkpoint', 'both.cp', ...W()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('cosigned by  w1.example, w2.example (witness quorum met)');
  });

  it('1 of 2 cosigned with a 2-of-2 policy: invalid, naming who signed and who did not; --quorum 1 accepts', () => {
    const r = run(['verify', 'day.jsonl', '--vkey', engineKey.verifierKey, '--checkpoint', 'one.cp', ...W()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('witnesses: below-quorum: witness quorum not met: cosigned by w1.example; not cosigned by w2.example');
    expect(run(['verify', 'day.jsonl', '--vkey', engineKey.verifierKey, '--checkpoint', 'one.cp', ...W(), '--quorum', '1']).code).toBe(0);
    expect(run(['verify', 'day.jsonl', '--vkey', engineKey.verifierKey, '--checkpoint', 'one.cp', '--policy', 'policy']).code).toBe(1);
  });

  it('usage errors: --quorum without --witness, both --policy and --witness, a bad key, k out of range', () => {
    const base = ['verify', 'day.jsonl', '--vkey', engineKey.verifierKey, '--checkpoint', 'both.cp'];
    expect(run([...base, '--quorum', '1']).code).toBe(2);
    expect(run([...base, '--policy', 'policy', ...W()]).code).toBe(2);
    expect(run([...base, '--witness', engineKey.verifierKey]).code).toBe(2);
    expect(run([...base, ...W(), '--quorum', '3']).code).toBe(2);
    expect(run([...base, '--policy', 'missing-file']).code).toBe(3);
  });
});

describe('tally verify-proof with witnesses', () => {
  it('the receipt carrying 2 of 2 is valid; carrying 1 of 2 is refused', () => {
    const ok = run(['verify-proof', 'both.tlog-proof', '--vkey', engineKey.verifierKey, '--policy', 'policy']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('cosigned by  w1.example, w2.example');
    const bad = run(['verify-proof', 'one.tlog-proof', '--vkey', engineKey.verifierKey, ...W()]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('invalid: witnesses: below-quorum');
    expect(bad.stderr).toContain('not cosigned by w2.example');
    // Without a policy the cosignatures are ignored (the old behaviour).
    expect(run(['verify-proof', 'one.tlog-proof', '--vkey', engineKey.verifierKey]).code).toBe(0);
  });

  it('a pinned --checkpoint below quorum is refused too', () => {
    const r = run(['verify-proof', 'both.tlog-proof', '--vkey', engineKey.verifierKey, '--checkpoint', 'one.cp', ...W()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the pinned checkpoint one.cp: witnesses: below-quorum');
  });
});

describe('tally grade verify with witnesses', () => {
  it('needs the cosigned sealed checkpoint of the graded transcript', () => {
    const base = ['grade', 'verify', 'grade.note', 'day.jsonl', '--vkey', 'grader.vkey'];
    expect(run([...base, ...W()]).code).toBe(2);
    const ok = run([...base, '--checkpoint', 'both.cp', '--engine-key', engineKey.verifierKey, ...W()]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('cosigned by  w1.example, w2.example');
    const bad = run([...base, '--checkpoint', 'one.cp', '--engine-key', engineKey.verifierKey, '--policy', 'policy']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('not cosigned by w2.example');
  });
});
