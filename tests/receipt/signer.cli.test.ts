/**
 * The engine key signs only its own history (issue #11), from outside: the
 * built `tally` in a child process. A grader's `prove` from a bundle file
 * signs nothing, so a re-sealed forgery can no longer get an engine-signed
 * checkpoint; and `tally checkpoint` refuses, through the store's signing
 * log, to sign a second root for a size it signed, or a tree inconsistent
 * with what it signed, even when the database was rewritten behind it.
 */
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeBundle, sha256, verifyBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { entryHash, toHex, type Entry } from '../../src/protocol/index.js';
import { openSessionCheckpoint, parseTlogProof } from '../../src/receipt/index.js';
import { SqliteStore } from '../../src/store/index.js';
import { tally } from '../cli/helpers.js';
import { entriesOf, intentDay, linesOf, reseal } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-signer-cli-'));
const env = { TALLY_KEY: join(dir, 'keys', 'engine.key'), TALLY_ENGINE_NAME: 'tally.example/desk' };
const run = (args: string[]) => tally(args, { cwd: dir, env });
const db = join(dir, 'day.db');
let sid = '';
let vkey = '';
let lines: Uint8Array[] = [];

/** A forgery of the day: `edit` applied, then every link, the session id and the seal recomputed. */
function forge(edit: (e: Entry, i: number) => Entry): Uint8Array[] {
  return reseal(entriesOf(lines).map(edit)).lines;
}

/** Rewrites a copy of the day's database behind the engine's back (triggers dropped), entry rows from index `from`. */
function tamperedCopy(name: string, forged: readonly Uint8Array[], from: number): string {
  const file = join(dir, name);
  copyFileSync(db, file);
  const raw = new Database(file);
  raw.exec('DROP TRIGGER entries_immutable_update');
  const update = raw.prepare('UPDATE entries SET hash = ?, bytes = ? WHERE session_id = ? AND idx = ?');
  for (let i = from; i < forged.length; i++) update.run(toHex(entryHash(sha256, forged[i]!)), Buffer.from(forged[i]!), sid, i);
  raw.close();
  // A copy is another file than the one the key signed from: refused before any per-origin rule
  // (TALLY_SIGN_TIMELINE_CHANGED) until an operator acknowledges it; the check shows the rewritten root.
  const moved = run(['checkpoint', '--db', file]);
  expect([moved.code, moved.stdout]).toEqual([1, '']);
  expect(moved.stderr).toContain('[TALLY_SIGN_TIMELINE_CHANGED]');
  const ack = run(['operator', 'acknowledge-failover', '--db', file, '--confirm']);
  expect(ack.code, ack.stderr).toBe(1); // 1: the store lost something (the signed seal's root)
  expect(ack.stdout).toMatch(/other-root +tally\.example\/desk\/[0-9a-f]{64} size 14/);
  return file;
}

beforeAll(async () => {
  const store = new SqliteStore(db);
  const engine = createEngine({ store });
  sid = (await intentDay({ engine, name: 'signer-day' })).sid;
  expect((await engine.finalize(sid, { note: 'sealed' })).ok).toBe(true);
  lines = await linesOf(engine, sid);
  await store.close();
  writeFileSync(join(dir, 'day.jsonl'), encodeBundle(lines));
  const k = run(['key', 'new']);
  expect(k.code).toBe(0);
  vkey = k.stdout.trim();
  const sealed = run(['checkpoint', '--db', db, '--out', 'receipt.note']);
  expect(sealed.code, sealed.stderr).toBe(0);
}, 60_000);

describe("a grader's prove signs nothing", () => {
  it('prove without --checkpoint over the day and over a re-sealed forgery (same session id) yields no engine-signed checkpoint: no equivocation, exit 2', async () => {
    const forged = forge((e) => (e.kind === 'finalize' ? { ...e, artifacts: { note: 'a better day' } } : e));
    writeFileSync(join(dir, 'forged.jsonl'), encodeBundle(forged));
    expect((await verifyBundle([encodeBundle(forged)])).ok).toBe(true);
    expect(toHex(entryHash(sha256, forged[0]!))).toBe(sid);
    const runs = ['day.jsonl', 'forged.jsonl'].map((f) => run(['prove', f, '--entry', '4']));
    // Every checkpoint the engine key signed in those runs, by (origin, size): never two roots.
    const roots = new Map<string, Set<string>>();
    for (const r of runs) {
      const p = parseTlogProof(r.stdout);
      if (!p.ok) continue;
      const cp = openSessionCheckpoint(p.tlogProof.signedCheckpoint, [vkey]);
      if (!cp.ok) continue;
      const k = `${cp.checkpoint.origin} ${cp.checkpoint.size}`;
      roots.set(k, (roots.get(k) ?? new Set()).add(cp.checkpoint.root));
    }
    for (const [k, set] of roots) expect(set.size, `two engine-signed roots for ${k}`).toBe(1);
    for (const r of runs) {
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toContain("--checkpoint <file> is required. prove signs nothing: pass the engine's signed checkpoint");
    }
  });

  it('prove needs the verifier key (exit 2), and refuses a checkpoint the key did not sign or of another transcript (exit 1)', () => {
    const noKey = run(['prove', 'day.jsonl', '--entry', '4', '--checkpoint', 'receipt.note']);
    expect([noKey.code, noKey.stderr]).toEqual([2, expect.stringContaining('--vkey <vkey> is required')]);
    // An engine private key file is not a verifier key: a grader never needs one.
    const priv = run(['prove', 'day.jsonl', '--entry', '4', '--checkpoint', 'receipt.note', '--vkey', env.TALLY_KEY]);
    expect(priv.code).toBe(2);
    const other = readFileSync(join(dir, 'receipt.note'), 'utf8').replace(/ [A-Za-z0-9+/=]+\n$/, ' ' + Buffer.alloc(68, 7).toString('base64') + '\n');
    writeFileSync(join(dir, 'bad-sig.note'), other);
    const bad = run(['prove', 'day.jsonl', '--entry', '4', '--checkpoint', 'bad-sig.note', '--vkey', vkey]);
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('checkpoint-unverified')]);
    const forgedBundle = run(['prove', 'forged.jsonl', '--entry', '4', '--checkpoint', 'receipt.note', '--vkey', vkey]);
    expect([forgedBundle.code, forgedBundle.stderr]).toEqual([1, expect.stringContaining('checkpoint-mismatch')]);
  });

  it("with the engine's checkpoint, prove writes a receipt that verify-proof accepts pinned to that checkpoint", () => {
    const p = run(['prove', 'day.jsonl', '--entry', '4', '--checkpoint', 'receipt.note', '--vkey', vkey, '--out', 't4.tlog-proof']);
    expect(p.code, p.stderr).toBe(0);
    const v = run(['verify-proof', 't4.tlog-proof', '--vkey', vkey, '--checkpoint', 'receipt.note']);
    expect([v.code, v.stdout]).toEqual([0, expect.stringContaining(`valid: entry 4 of session ${sid} (pinned checkpoint)`)]);
  });
});

describe('tally checkpoint signs only through the signing log', () => {
  it('a database rewritten after the seal: the sealed size is refused (TALLY_SIGN_EQUIVOCATION), and so is a prefix the rewritten tree cannot prove consistent', () => {
    const forged = forge((e) => (e.kind === 'finalize' ? { ...e, artifacts: { note: 'a better day' } } : e));
    const file = tamperedCopy('rewritten-seal.db', forged, lines.length - 1);
    const r = run(['checkpoint', '--db', file]);
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toContain('[TALLY_SIGN_EQUIVOCATION]');
    // The first 10 entries are untouched, but the consistency proof to the signed seal comes from the
    // store's (rewritten) tree and no longer links: what the store cannot prove is not signed.
    const prefix = run(['checkpoint', '--db', file, '--size', '10']);
    expect([prefix.code, prefix.stdout]).toEqual([1, '']);
    expect(prefix.stderr).toContain('not consistent with the checkpoint signed at size 14 (root-mismatch). (refused');
    expect(prefix.stderr).toContain('[TALLY_SIGN_INCONSISTENT]');
    // The untouched original still answers the same signed bytes (a duplicate in its log).
    expect(run(['checkpoint', '--db', db]).stdout).toBe(readFileSync(join(dir, 'receipt.note'), 'utf8'));
  });

  it('a database rewritten from entry 4: a size never signed is refused as inconsistent with the signed seal (TALLY_SIGN_INCONSISTENT)', () => {
    const forged = forge((e, i) => (i === 4 && e.kind === 'turn' ? { ...e, ruling: { intent: { admitted: true } } } : e));
    const file = tamperedCopy('rewritten-4.db', forged, 4);
    const r = run(['checkpoint', '--db', file, '--size', '6']);
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toContain('[TALLY_SIGN_INCONSISTENT]');
    // Nor below the rewrite, nor beyond the signed size's refusal, nothing of the rewritten day is signed.
    expect(run(['checkpoint', '--db', file, '--size', '4']).stderr).toContain('[TALLY_SIGN_INCONSISTENT]');
    expect(run(['checkpoint', '--db', file]).stderr).toContain('[TALLY_SIGN_EQUIVOCATION]');
  });
});
