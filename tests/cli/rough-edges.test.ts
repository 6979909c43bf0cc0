/**
 * The command line as a person meets it, from outside (the built binary):
 * typos, negative ordinals, help, filters, corrupt stores, directories given
 * as files, malformed keys, times, plurals, what a verification checked, the
 * progress bar's width, hints that work, and an identical --auto re-run.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { encodeBundle } from '../../src/codec/index.js';
import { TALLY, tally } from './helpers.js';

const golden = resolve(import.meta.dirname, '../golden/transcript.jsonl');
const goldenRoot = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../golden/golden.json'), 'utf8')) as { receipt: { receiptRoot: string } }).receipt.receiptRoot;
const dir = mkdtempSync(join(tmpdir(), 'tally-cli-edges-'));
const noStack = (r: { stderr: string }) => expect(r.stderr).not.toMatch(/\n\s+at /);

describe('typos and option values', () => {
  it('an unknown option says which one, and what was probably meant', () => {
    const r = tally(['verify', golden, '--rooot', goldenRoot]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tally verify: unknown option --rooot \(did you mean --root\?\)\n/);
    const cmd = tally(['verfy', golden]);
    expect(cmd.code).toBe(2);
    expect(cmd.stderr).toContain("unknown command 'verfy' (did you mean 'verify'?)");
  });

  it('--ordinal -1 is the OPEN frame (not an ambiguity error); a missing value is named', () => {
    const db = join(dir, 'ordinal.db');
    const sid = (JSON.parse(tally(['open', '--name', 'ordinal-day', '--db', db, '--json']).stdout) as { sessionId: string }).sessionId;
    const r = tally(['frame', '--session', sid, '--ordinal', '-1', '--time', '2030-01-01T09:00:00Z', '--db', db]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^frame -1 recorded as entry 1/);
  });

  it('tally help <command> prints that command\'s help', () => {
    const r = tally(['help', 'verify']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: tally verify <bundle.jsonl>/);
  });

  it('inspect refuses filter values it does not know, listing the allowed ones (exit 2)', () => {
    const ruling = tally(['inspect', golden, '--ruling', 'bogus']);
    expect(ruling.code).toBe(2);
    expect(ruling.stderr).toMatch(/--ruling must be .*\(got 'bogus'\); allowed: admitted, rejected, stand-down, .*replayed_nonce.*turn-conflict.*duplicate/);
    const action = tally(['inspect', golden, '--action', 'Transfer']);
    expect(action.code).toBe(2);
    expect(action.stderr).toContain("--action must be one of open, modify, close, transfer, note, stand-down (got 'Transfer')");
  });

  it('a malformed --key value is a usage error (2); a directory as a file is explained (3)', () => {
    const key = tally(['verify', golden, '--vkey', 'garbage', '--checkpoint', golden]);
    expect(key.code).toBe(2);
    expect(key.stderr).toContain("--vkey: 'garbage' is neither a verifier key");
    const d = join(dir, 'a-directory');
    mkdirSync(d, { recursive: true });
    for (const args of [['verify', d], ['inspect', d], ['replay', d], ['verify-proof', d, '--vkey', 'tally.example/golden+60fb338e+AddamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea']]) {
      const r = tally(args);
      expect(r.code, args.join(' ')).toBe(3);
      expect(r.stderr, args.join(' ')).toContain(`${d}: it is a directory, not a file`);
      expect(r.stderr).not.toContain('EISDIR');
      noStack(r);
    }
  });
});

describe('stores and sessions', () => {
  it('events on a corrupted row is TALLY_STORE_CORRUPT, exit 3, like describe', () => {
    const db = join(dir, 'corrupt.db');
    const sid = (JSON.parse(tally(['open', '--name', 'corrupt-day', '--db', db, '--json']).stdout) as { sessionId: string }).sessionId;
    expect(tally(['frame', '--session', sid, '--ordinal', 'open', '--time', '2030-01-01T09:00:00Z', '--db', db]).code).toBe(0);
    const sql = new Database(db);
    sql.exec("DROP TRIGGER entries_immutable_update; UPDATE entries SET bytes = CAST(bytes AS TEXT) WHERE idx = 1");
    sql.close();
    for (const verb of ['events', 'describe']) {
      const r = tally([verb, '--session', sid, '--db', db]);
      expect(r.code, verb).toBe(3);
      expect(r.stderr, verb).toMatch(/corrupt at entry 1\. .*\[TALLY_STORE_CORRUPT\]/);
      noStack(r);
    }
  });

  it('--auto re-run is a duplicate (exit 0); a redelivered, answered frame hints the next frame, not a failing turn', () => {
    const db = join(dir, 'auto.db');
    const sid = (JSON.parse(tally(['open', '--name', 'auto-day', '--db', db, '--json']).stdout) as { sessionId: string }).sessionId;
    const frame = ['frame', '--session', sid, '--ordinal', 'open', '--time', '2030-01-01T09:00:00Z', '--db', db];
    expect(tally(frame).stdout).toContain(`next: tally turn --session ${sid} --auto`);
    const turn = ['turn', '--session', sid, '--auto', '--text', 'hold', '--db', db];
    expect(tally(turn).stdout).toMatch(/^turn -1 recorded as entry 2/);
    const again = tally(turn);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^turn -1 already recorded \(duplicate\) as entry 2/);
    const other = tally(['turn', '--session', sid, '--auto', '--text', 'sell', '--db', db]);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('not-pending: no frame is pending (deliver frame 0 first); frame -1 is already answered by a different turn');
    const redelivered = tally(frame);
    expect(redelivered.code).toBe(0);
    expect(redelivered.stdout).toContain('already recorded (duplicate)');
    expect(redelivered.stdout).not.toContain('turn --session');
    expect(redelivered.stdout).toContain(`its turn is already recorded; next: tally frame --session ${sid} --ordinal 0 --time <ms|iso>`);
    // Messages give times as ISO 8601 UTC, not epoch milliseconds.
    const back = tally(['frame', '--session', sid, '--ordinal', '0', '--time', '2029-06-01T00:00:00Z', '--db', db]);
    expect(back.code).toBe(1);
    expect(back.stderr).toContain("frame time 2029-06-01T00:00:00Z is before the previous frame's 2030-01-01T09:00:00Z");
    // Under npm (npx tally, npm start) hints spell the command the way it was run.
    expect(tally([...frame.slice(0, 3), '--ordinal', '0', '--time', '2030-01-01T09:30:00Z', '--db', db], { env: { npm_command: 'exec' } }).stdout).toContain(`next: npx tally turn --session ${sid}`);
  });
});

describe('what a verification checked', () => {
  it('unpinned results say so; pinned ones say what they were pinned to', () => {
    const plain = tally(['verify', golden]);
    expect(plain.stdout.split('\n')[0]).toBe('valid, unpinned (internal consistency only; pin with --root or --vkey + --checkpoint)');
    const pinned = tally(['verify', golden, '--root', goldenRoot]);
    expect(pinned.stdout.split('\n')[0]).toBe(`valid, pinned to receipt root ${goldenRoot}`);
    const replay = tally(['replay', golden]);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain('valid, unpinned (internal consistency only; pin with --root or --vkey + --checkpoint)');
    expect(tally(['replay', golden, '--root', goldenRoot]).stdout).toContain(`valid, pinned to receipt root ${goldenRoot}`);
    expect(tally(['inspect', golden]).stdout).toContain('valid, unpinned (internal consistency only; pin with --root or --vkey + --checkpoint): 10 entries, sealed');
  });

  it('an edited entry is named with its neighbour: entry N+1\'s link does not match entry N', () => {
    const lines = readFileSync(golden, 'utf8').split('\n');
    expect(lines[6]).toContain('"failureClass":"timeout"');
    lines[6] = lines[6]!.replace('"failureClass":"timeout"', '"failureClass":"provider"');
    const bad = join(dir, 'edited.jsonl');
    writeFileSync(bad, lines.join('\n'));
    for (const args of [['verify', bad], ['verify', bad, '--parallel']]) {
      const r = tally(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^invalid: entry 7: broken-link: entry 7's link does not match entry 6: /);
    }
  });
});

describe('plurals and the progress bar', () => {
  it('"1 frame, 1 turn", "1 entry", no "all 0 rulings"', async () => {
    const engine = createEngine();
    const open = await engine.open({ name: 'one-frame' });
    if (!open.ok) throw new Error(open.message);
    const f = await engine.frame({ sessionId: open.sessionId, ordinal: -1, time: 0 });
    if (!f.ok) throw new Error(f.message);
    await engine.turn({ sessionId: open.sessionId, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
    await engine.finalize(open.sessionId);
    const lines: Uint8Array[] = [];
    for await (const l of engine.exportEntries(open.sessionId)) lines.push(l);
    const file = join(dir, 'one.jsonl');
    writeFileSync(file, encodeBundle(lines));
    expect(tally(['verify', file]).stdout).toContain('entries      4 (1 frame, 1 turn), sealed');
    const replay = tally(['replay', file]);
    expect(replay.stdout).toMatch(/^replayed: 4 entries, 1 turn; no rulings to re-derive/);
    expect(replay.stdout).not.toContain('all 0');
  });

  it('the progress bar fits a narrow terminal and never wraps', () => {
    // `script` gives the child a terminal 40 columns wide; the demo draws its bars on it.
    const out = execFileSync('script', ['-qec', `stty cols 40; ${process.execPath} ${TALLY} demo --wakes 4 --db memory: --out ${join(dir, 'narrow')} > /dev/null`, '/dev/null'], { encoding: 'utf8', env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'TALLY_NO_PROGRESS')) });
    const draws = out.split('\r').map((s) => s.replace(/\x1b\[K/g, '')).filter((s) => s.includes('['));
    expect(draws.length).toBeGreaterThan(0);
    for (const d of draws) expect(d.length, d).toBeLessThan(40);
  });
});

describe('tally serve set-up as the README says', () => {
  it('the line --new-token prints, saved as tokens.json, starts the server; a bad file is explained in words', async () => {
    const made = tally(['serve', '--new-token', '--role', 'runtime']);
    expect(made.code).toBe(0);
    const line = made.stdout.trim().split('\n')[1]!;
    const auth = join(dir, 'tokens.json');
    writeFileSync(auth, line + '\n');
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [TALLY, 'serve', '--auth', auth, '--db', 'memory:', '--port', '0', '--log-level', 'silent'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const first = await new Promise<string>((ok, fail) => {
        child.stdout.once('data', (b: Buffer) => ok(b.toString('utf8')));
        child.once('exit', (code) => fail(new Error(`serve exited ${code}`)));
      });
      expect(first).toMatch(/^tally serve: listening on http:\/\/127\.0\.0\.1:\d+/);
    } finally {
      child.kill('SIGTERM');
    }
    writeFileSync(auth, `${line}\n${line}\n`);
    const twice = tally(['serve', '--auth', auth, '--db', 'memory:', '--port', '0']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('is used twice');
    writeFileSync(auth, '{"tokenz": []}');
    const bad = tally(['serve', '--auth', auth, '--db', 'memory:', '--port', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('expected {"tokens": [<token entry>, …]}, an array of token entries, or one token entry');
    expect(bad.stderr).not.toContain('(root): Invalid input');
  });
});
