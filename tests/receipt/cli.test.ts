/** The receipt commands, run as a user would: the built `tally` binary in a child process. */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import { generateEngineKey } from '../../src/receipt/index.js';
import { createEngine } from '../../src/engine.js';
import { SqliteStore } from '../../src/store/index.js';
import { tally } from '../cli/helpers.js';
import { entriesOf, intentDay, linesOf, reseal } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-receipt-cli-'));
const env = { TALLY_KEY: join(dir, 'keys', 'engine.key'), TALLY_ENGINE_NAME: 'tally.example/desk' };
const run = (args: string[]) => tally(args, { cwd: dir, env });
const db = join(dir, 'day.db');
let sid = '';
let vkey = '';
let lines: Uint8Array[] = [];

beforeAll(async () => {
  // Record an unsealed intent day into a SQLite database.
  const store = new SqliteStore(db);
  const engine = createEngine({ store });
  sid = (await intentDay({ engine, name: 'cli-day' })).sid;
  await store.close();
  // The engine key is created on purpose; a mid-day checkpoint is signed before the seal.
  const k = run(['key', 'new']);
  expect(k.code).toBe(0);
  vkey = k.stdout.trim();
  expect(run(['checkpoint', '--db', db, '--size', '5', '--out', 'mid.cp']).code).toBe(0);
  const s2 = new SqliteStore(db);
  const e2 = createEngine({ store: s2 });
  expect((await e2.finalize(sid, { note: 'sealed' })).ok).toBe(true);
  lines = await linesOf(e2, sid);
  await s2.close();
  writeFileSync(join(dir, 'day.jsonl'), encodeBundle(lines));
  const sealed = run(['checkpoint', '--db', db, '--session', sid, '--out', 'sealed.cp', '--json']);
  expect(sealed.code).toBe(0);
  expect(JSON.parse(sealed.stdout)).toMatchObject({ ok: true, sessionId: sid, size: lines.length, verifierKey: vkey });
}, 60_000);

describe('tally checkpoint', () => {
  it('key new generates the engine key, owner-only, and prints its C2SP verifier key', () => {
    expect(vkey).toMatch(/^tally\.example\/desk\+[0-9a-f]{8}\+A[A-Za-z0-9+/]{43}$/);
    if (process.platform !== 'win32') expect(statSync(env.TALLY_KEY).mode & 0o777).toBe(0o600);
    const cp = readFileSync(join(dir, 'sealed.cp'), 'utf8');
    expect(cp.split('\n').slice(0, 2)).toEqual([`tally.example/desk/${sid}`, String(lines.length)]);
    expect(readFileSync(join(dir, 'mid.cp'), 'utf8').split('\n')[1]).toBe('5');
  });

  it('refuses a size beyond the session (exit 1) and a missing database (exit 3)', () => {
    const r = run(['checkpoint', '--db', db, '--size', '999']);
    expect([r.code, r.stderr]).toEqual([1, expect.stringContaining('size-out-of-range')]);
    expect(run(['checkpoint', '--db', join(dir, 'nope.db')]).code).toBe(3);
  });
});

describe('tally verify --key --checkpoint', () => {
  it('pins the day with the sealed checkpoint, and accepts an earlier checkpoint as a prefix', () => {
    const all = run(['verify', 'day.jsonl', '--vkey', vkey, '--checkpoint', 'sealed.cp']);
    expect([all.code, all.stdout]).toEqual([0, expect.stringContaining('(the whole bundle)')]);
    const mid = run(['verify', 'day.jsonl', '--vkey', vkey, '--checkpoint', 'mid.cp']);
    expect([mid.code, mid.stdout]).toEqual([0, expect.stringContaining('the first 5')]);
  });

  it('a re-sealed forgery verifies alone but not against the checkpoint; a wrong key and a lone flag are named', async () => {
    const forged = reseal(entriesOf(lines).map((e) => (e.kind === 'finalize' ? { ...e, artifacts: { note: 'better day' } } : e)));
    writeFileSync(join(dir, 'forged.jsonl'), forged.bundle);
    expect((await verifyBundle([forged.bundle])).ok).toBe(true);
    const r = run(['verify', 'forged.jsonl', '--vkey', vkey, '--checkpoint', 'sealed.cp']);
    expect([r.code, r.stderr]).toEqual([1, expect.stringContaining('match: root-mismatch')]);
    const other = generateEngineKey('tally.example/desk').verifierKey;
    expect(run(['verify', 'day.jsonl', '--vkey', other, '--checkpoint', 'sealed.cp']).stderr).toContain('no-pinned-signature');
    const lone = run(['verify', 'day.jsonl', '--checkpoint', 'sealed.cp']);
    expect([lone.code, lone.stderr]).toEqual([2, expect.stringContaining('needs --vkey')]);
  });
});

describe('tally prove / verify-proof', () => {
  it('writes a single-turn receipt a grader verifies with the verifier key alone', () => {
    expect(run(['prove', 'day.jsonl', '--entry', '4', '--checkpoint', 'sealed.cp', '--vkey', vkey, '--out', 't4.tlog-proof']).code).toBe(0);
    const text = readFileSync(join(dir, 't4.tlog-proof'), 'utf8');
    expect(text.startsWith('c2sp.org/tlog-proof@v1\nextra ')).toBe(true);
    const v = run(['verify-proof', 't4.tlog-proof', '--vkey', vkey, '--checkpoint', 'sealed.cp']);
    expect(v.code).toBe(0);
    expect(v.stdout).toContain(`valid: entry 4 of session ${sid} (pinned checkpoint)`);
    // The ruling in words (inspect's wording); the whole ruling object is in --json.
    expect(v.stdout).toMatch(/ruling {2,}alpha open long 1 BTC-PERP: REJECTED expired \(ttl\)/);
    // Without --out the receipt goes to stdout, the same bytes; prove never signs (no --checkpoint: usage error).
    const p = run(['prove', 'day.jsonl', '--entry', '4', '--checkpoint', 'sealed.cp', '--vkey', vkey]);
    expect([p.code, p.stdout]).toEqual([0, text]);
    expect(run(['prove', 'day.jsonl', '--entry', '4']).code).toBe(2);
  });

  it('fails on a tampered receipt, another pin, a wrong key; usage and I/O errors have their codes', () => {
    const text = readFileSync(join(dir, 't4.tlog-proof'), 'utf8');
    writeFileSync(join(dir, 'bad.tlog-proof'), text.replace('index 4', 'index 5'));
    const bad = run(['verify-proof', 'bad.tlog-proof', '--vkey', vkey, '--json']);
    expect([bad.code, JSON.parse(bad.stdout)]).toEqual([1, expect.objectContaining({ ok: false, stage: 'inclusion', code: 'root-mismatch' })]);
    const pinned = run(['verify-proof', 't4.tlog-proof', '--vkey', vkey, '--checkpoint', 'mid.cp']);
    expect([pinned.code, pinned.stderr]).toEqual([1, expect.stringContaining('pin: pin-mismatch')]);
    expect(run(['verify-proof', 't4.tlog-proof']).code).toBe(2);
    expect(run(['verify-proof', 'missing.tlog-proof', '--vkey', vkey]).code).toBe(3);
    const beyond = run(['prove', 'day.jsonl', '--entry', '5', '--checkpoint', 'mid.cp', '--vkey', vkey]);
    expect([beyond.code, beyond.stderr]).toEqual([1, expect.stringContaining('index-out-of-range')]);
  });
});

describe('tally replay', () => {
  it('re-derives every ruling of the day', () => {
    const r = run(['replay', 'day.jsonl']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('all 4 rulings re-derived');
  });

  it('names the entry whose ruling was edited, even with every hash recomputed', async () => {
    const entries = entriesOf(lines);
    const i = entries.findIndex((e) => e.kind === 'turn' && JSON.stringify(e.ruling ?? {}).includes('"admitted":true'));
    const forged = reseal(entries.map((e, j) => (j === i ? { ...e, ruling: { intent: { admitted: false, stage: 'ttl', code: 'expired', message: 'x' } } } : e)));
    writeFileSync(join(dir, 'edited.jsonl'), forged.bundle);
    expect((await verifyBundle([forged.bundle])).ok).toBe(true);
    const r = run(['replay', 'edited.jsonl']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`entry ${i}: ruling-diverged`);
    const j = run(['replay', 'edited.jsonl', '--json']);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, stage: 'replay', divergences: [{ index: i, kind: 'ruling-diverged' }] });
    expect(run(['replay', 'day.jsonl', '--ruler', 'bogus']).code).toBe(2);
  });
});

describe('tally grade', () => {
  it('signs a grade pinning the day; it verifies for that bundle only', () => {
    const s = run(['grade', 'sign', 'day.jsonl', '--grade', '{"score":87,"rubric":"v3"}', '--key', 'grader.key', '--name', 'grader.example', '--out', 'day.grade']);
    expect(s.code).toBe(0);
    const gk = run(['grade', 'key', '--key', 'grader.key']).stdout.trim();
    expect(gk).toMatch(/^grader\.example\+/);
    const ok = run(['grade', 'verify', 'day.grade', 'day.jsonl', '--vkey', gk]);
    expect([ok.code, ok.stdout]).toEqual([0, expect.stringContaining('grade        {"rubric":"v3","score":87}')]);
    const other = run(['grade', 'verify', 'day.grade', 'forged.jsonl', '--vkey', gk]);
    expect([other.code, other.stderr]).toEqual([1, expect.stringContaining('transcript: other-transcript')]);
    expect(run(['grade', 'verify', 'day.grade', 'day.jsonl', '--vkey', vkey]).stderr).toContain('no-pinned-signature');
    expect(run(['grade', 'sign', 'day.jsonl', '--grade', '{"score":0.5}', '--key', 'grader.key']).code).toBe(2);
  });
});

describe('--help', () => {
  it('every receipt command documents its usage and exit codes', () => {
    for (const c of ['checkpoint', 'prove', 'verify-proof', 'replay', 'grade', 'verify']) {
      const r = run([c, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Usage: tally ${c}`);
      expect(r.stdout).toContain('Exit codes:');
    }
  });
});
