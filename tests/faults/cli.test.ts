/**
 * The CLI under a failing fsync (`fiu-run -x`, every `fsync`/`fdatasync`
 * fails): `tally frame` exits 3 with one typed line on stderr (no stack
 * trace, nothing on stdout, so nothing looks acknowledged); the same command
 * run again without the fault records the frame exactly once. The engine key
 * (write to a temp file, fsync, link/rename, fsync the directory) is never
 * left half-written when fsync fails.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TALLY, cleanup, tempDir } from '../server/helpers.js';
import { openStore } from '../../src/store/index.js';
import { fiuSkip, warnSkips } from './helpers/tools.js';

warnSkips('cli.test.ts', [fiuSkip]);
afterAll(cleanup);

function tally(args: string[], fiu?: string): { status: number | null; stdout: string; stderr: string } {
  const cmd = fiu === undefined ? [process.execPath, TALLY, ...args] : ['fiu-run', '-x', '-c', fiu, process.execPath, TALLY, ...args];
  const r = spawnSync(cmd[0]!, cmd.slice(1), { encoding: 'utf8', env: { ...process.env, TALLY_DEBUG: '' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.skipIf(fiuSkip !== undefined)('tally frame under a failing fsync (fiu-run)', () => {
  it('exits 3 with one typed JSON line and prints nothing else; the retry without the fault records the frame once', async () => {
    const db = join(tempDir('clifiu'), 'tally.db');
    const opened = tally(['open', '--name', `cli-fiu-${process.pid}`, '--db', db, '--json']);
    expect(opened.status, opened.stderr).toBe(0);
    const sid = (JSON.parse(opened.stdout) as { sessionId: string }).sessionId;
    const args = ['frame', '--session', sid, '--ordinal=-1', '--time', '1000', '--db', db, '--json'];
    for (let i = 0; i < 3; i++) {
      const failed = tally(args, 'enable name=posix/io/sync/*');
      expect(failed.status).toBe(3);
      // With --json the one typed line is a JSON object on stdout, and nothing goes to stderr.
      expect(failed.stderr).toBe('');
      expect(failed.stdout.trim().split('\n')).toHaveLength(1);
      expect(JSON.parse(failed.stdout)).toMatchObject({ ok: false, code: 'TALLY_STORE_IO', exit: 3, message: expect.stringMatching(/^SQLite could not commit /) });
    }
    const ok = tally(args);
    expect(ok.status, ok.stderr).toBe(0);
    const r = JSON.parse(ok.stdout) as { index: number; entryHash: string };
    expect(r.index).toBe(1);
    const again = tally(args);
    expect(JSON.parse(again.stdout)).toMatchObject({ index: 1, entryHash: r.entryHash, duplicate: true });
    const store = await openStore(db);
    try {
      const head = await store.loadHead(sid);
      expect(head?.size).toBe(2);
      expect(head?.head).toBe(r.entryHash);
    } finally {
      await store.close();
    }
  });

  it('the engine key is never written half-way: with fsync failing `tally key new` leaves no key file (and no temp file), exit 3; then it is created whole, and never replaced', () => {
    const dir = tempDir('keyfiu');
    const key = join(dir, 'engine.key');
    for (let i = 0; i < 3; i++) {
      const failed = tally(['key', 'new', '--key', key], 'enable name=posix/io/sync/*');
      expect(failed.status).toBe(3);
      expect(failed.stderr).toMatch(/Cannot write the engine key file/);
      expect(failed.stderr).not.toMatch(/\n\s+at /);
      expect(readdirSync(dir)).toEqual([]);
    }
    const ok = tally(['key', 'new', '--key', key]);
    expect(ok.status, ok.stderr).toBe(0);
    expect(readdirSync(dir)).toEqual(['engine.key']);
    const again = tally(['checkpoint', '--print-key', '--key', key]);
    expect(again.stdout).toBe(ok.stdout);
    expect(tally(['key', 'new', '--key', key]).status).toBe(1);
    expect(readFileSync(key, 'utf8').endsWith('\n')).toBe(true);
  });
});
