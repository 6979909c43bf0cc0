/**
 * The equivocation test, run as users would (built CLI, real processes):
 * one engine key, two databases holding two different histories of the same
 * session (a second engine with the same key). View A is shown to witness 1,
 * view B to witness 2 — both at the same size. Each witness cosigns at most
 * one root; a grader requiring 2 of 2 refuses both views; `tally monitor`
 * holding view A and following the engine serving view B reports the
 * equivocation with both signed checkpoints. Also `tally consistency
 * prove|verify` on an honest pair and on the fork.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { formatConsistencyProof } from '../../src/receipt/index.js';
import { SqliteStore } from '../../src/store/index.js';
import { addSignatureLines, submitCheckpoint } from '../../src/witness/index.js';
import { TALLY, tally } from '../cli/helpers.js';
import { startServer, TOKENS } from '../server/helpers.js';
import { startListening, type Running } from './serve.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-equiv-'));
const env = { TALLY_KEY: join(dir, 'engine.key'), TALLY_ENGINE_NAME: 'tally.example/desk' };
const run = (args: string[]) => tally(args, { cwd: dir, env });
const enc = new TextEncoder();
let sid = '';
let vkey = '';
const witnesses: Running[] = [];
const wkeys: string[] = [];

/** A small day whose data depends on `view`: same spec (same session id), different entries. */
async function day(db: string, view: string): Promise<string> {
  const store = new SqliteStore(db);
  const engine = createEngine({ store });
  const open = await engine.open({ name: 'equivocation-day', day: '2026-12-01' });
  if (!open.ok) throw new Error(open.message);
  for (let ord = -1; ord < 3; ord++) {
    const f = await engine.frame({ sessionId: open.sessionId, ordinal: ord, time: 1_000 + (ord + 1) * 60_000, data: { price: ord < 1 ? '100' : `${view}${ord}` } });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: open.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`answer ${ord}`) } });
    if (!t.ok) throw new Error(t.message);
  }
  const fin = await engine.finalize(open.sessionId, { view });
  if (!fin.ok) throw new Error(fin.message);
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(open.sessionId)) lines.push(l);
  writeFileSync(db.replace(/\.db$/, '.jsonl'), encodeBundle(lines));
  await store.close();
  return open.sessionId;
}

beforeAll(async () => {
  sid = await day(join(dir, 'a.db'), 'A');
  expect(await day(join(dir, 'b.db'), 'B')).toBe(sid);
  vkey = run(['key', 'new']).stdout.trim();
  for (const [db, out] of [['a.db', 'a.cp'], ['b.db', 'b.cp']] as const) expect(run(['checkpoint', '--db', db, '--out', out]).code).toBe(0);
  expect(run(['checkpoint', '--db', 'a.db', '--size', '3', '--out', 'a3.cp']).code).toBe(0);
  for (const n of ['w1', 'w2']) {
    const key = join(dir, `${n}.key`);
    wkeys.push(tally(['witness', 'keygen', '--name', `${n}.example`, '--key', key]).stdout.trim());
    witnesses.push(await startListening([TALLY, 'witness', 'serve', '--key', key, '--db', join(dir, `${n}.db`), '--log-key', vkey]));
  }
}, 60_000);

afterAll(async () => {
  for (const w of witnesses) {
    w.child.kill('SIGTERM');
    await w.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

const read = (f: string) => readFileSync(join(dir, f), 'utf8');

describe('tally consistency', () => {
  it('proves and verifies an honest pair; refuses to prove against the other view', () => {
    const p = run(['consistency', 'prove', 'a3.cp', 'a.cp', '--db', 'a.db', '--out', 'a3-a.proof']);
    expect(p.code).toBe(0);
    expect(read('a3-a.proof').startsWith('old 3\n')).toBe(true);
    const v = run(['consistency', 'verify', 'a3.cp', 'a3-a.proof', '--vkey', vkey]);
    expect([v.code, v.stdout]).toEqual([0, expect.stringContaining(`consistent: session ${sid} grew from 3 to`)]);
    // The views share their first entries: A's size-3 checkpoint is a state of B too.
    expect(run(['consistency', 'prove', 'a3.cp', 'b.cp', '--db', 'b.db']).code).toBe(0);
    const fork = run(['consistency', 'prove', 'a.cp', '--db', 'b.db']);
    expect([fork.code, fork.stderr]).toEqual([1, expect.stringContaining('root-mismatch')]);
  });

  it('a proof of view B from A\'s size-3 checkpoint does not verify', () => {
    expect(run(['consistency', 'prove', 'a3.cp', '--db', 'a.db', '--out', 'fresh.proof']).code).toBe(0);
    const swapped = read('fresh.proof').replace(/\n\n[\s\S]*$/, `\n\n${read('b.cp')}`);
    writeFileSync(join(dir, 'swapped.proof'), swapped);
    const v = run(['consistency', 'verify', 'a3.cp', 'swapped.proof', '--vkey', vkey]);
    expect([v.code, v.stderr]).toEqual([1, expect.stringContaining('consistency')]);
    expect(run(['consistency', 'verify', 'a3.cp', '--vkey', vkey]).code).toBe(2);
  });
});

describe('the equivocation', () => {
  it('each witness cosigns at most one root; 2-of-2 graders refuse both views; monitor reports with evidence', async () => {
    const [w1, w2] = witnesses as [Running, Running];
    const body = (cp: string) => formatConsistencyProof({ oldSize: 0, proof: [], signedCheckpoint: cp });
    const a1 = await submitCheckpoint(w1.url, body(read('a.cp')));
    const b2 = await submitCheckpoint(w2.url, body(read('b.cp')));
    expect([a1.kind, b2.kind]).toEqual(['cosigned', 'cosigned']);
    const size = Number(read('a.cp').split('\n')[1]);
    // Shown the other view at the same size, each witness refuses (C2SP tlog-witness: same size, other root is 422).
    expect(await submitCheckpoint(w1.url, formatConsistencyProof({ oldSize: size, proof: [], signedCheckpoint: read('b.cp') }))).toMatchObject({ kind: 'refused', status: 422 });
    expect(await submitCheckpoint(w2.url, formatConsistencyProof({ oldSize: size, proof: [], signedCheckpoint: read('a.cp') }))).toMatchObject({ kind: 'refused', status: 422 });
    if (a1.kind !== 'cosigned' || b2.kind !== 'cosigned') return;
    writeFileSync(join(dir, 'a-cosigned.cp'), addSignatureLines(read('a.cp'), a1.lines));
    writeFileSync(join(dir, 'b-cosigned.cp'), addSignatureLines(read('b.cp'), b2.lines));
    // Graders requiring 2 of 2 refuse either view, naming the witness that did not cosign.
    for (const [bundle, cp, missing] of [['a.jsonl', 'a-cosigned.cp', 'w2.example'], ['b.jsonl', 'b-cosigned.cp', 'w1.example']] as const) {
      const receipt = run(['prove', bundle, '--entry', '1', '--checkpoint', cp, '--vkey', vkey, '--out', `${cp}.tlog-proof`]);
      expect(receipt.code, receipt.stderr).toBe(0);
      const g = run(['verify-proof', `${cp}.tlog-proof`, '--vkey', vkey, '--witness', wkeys[0]!, '--witness', wkeys[1]!, '--quorum', '2']);
      expect(g.code).toBe(1);
      expect(g.stderr).toContain(`not cosigned by ${missing}`);
      expect(run(['verify-proof', `${cp}.tlog-proof`, '--vkey', vkey, '--witness', wkeys[0]!, '--witness', wkeys[1]!, '--quorum', '1']).code).toBe(0);
    }
    // The monitor holds view A and follows the engine serving view B.
    const server = await startServer({ db: join(dir, 'b.db'), args: ['--key', env.TALLY_KEY], env, dir });
    try {
      const m = tally(['monitor', '--url', server.url, '--session', sid, '--vkey', vkey, '--checkpoint', 'a-cosigned.cp', '--rounds', '3', '--interval', '0', '--evidence', 'evidence.json'], { cwd: dir, env: { TALLY_TOKEN: TOKENS.auditor } });
      expect(m.code).toBe(1);
      expect(m.stderr).toContain('EQUIVOCATION');
      const ev = JSON.parse(read('evidence.json')) as { older: string; newer: string };
      expect(ev.older).toBe(read('a-cosigned.cp'));
      expect(ev.newer.split('\n').slice(0, 3)).toEqual(read('b.cp').split('\n').slice(0, 3));
      // Following the honest view from A's own size-3 checkpoint, every round is consistent.
      const ok = tally(['monitor', '--url', server.url, '--session', sid, '--vkey', vkey, '--rounds', '2', '--interval', '0'], { cwd: dir, env: { TALLY_TOKEN: TOKENS.auditor } });
      expect([ok.code, ok.stdout]).toEqual([0, expect.stringContaining('no equivocation')]);
    } finally {
      await server.stop();
    }
  });
});
