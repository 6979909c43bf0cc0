/**
 * `npx tally judge serve &` then `kill $!`: the signal reaches only npm's
 * wrapper (npm exec → sh → node), which does not pass it on. The server must
 * notice that the npm process that started it is gone and stop, freeing its
 * port, instead of living on as an orphan (src/cli/launcher.ts).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

/** Pids of the processes whose environment holds `MARK=<mark>`. */
function marked(mark: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d) || Number(d) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${d}/environ`, 'latin1').split('\0').includes(`TALLY_TEST_MARK=${mark}`)) out.push(Number(d));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

describe.runIf(process.platform === 'linux')('a server started through npx', () => {
  it('stops when the npm wrapper it was started by is killed', async () => {
    const dir = mkdtempSync(join(root, '.launcher-test-'));
    const key = join(dir, 'judge.key');
    writeFileSync(key, `0x${'11'.repeat(32)}\n`, { mode: 0o600 });
    const mark = randomBytes(8).toString('hex');
    const env: Record<string, string> = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? dir, TALLY_TEST_MARK: mark };
    const npm = spawn('npm', ['exec', '--', 'tally', 'judge', 'serve', '--key', key, '--port', '0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((ok, fail) => {
        let out = '';
        npm.stdout.on('data', (b: Buffer) => {
          out += b.toString();
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m) ok(m[1]!);
        });
        npm.once('exit', (code) => fail(new Error(`npm exec exited ${code} before the judge listened: ${out}`)));
      });
      const server = marked(mark).filter((p) => p !== npm.pid);
      expect(server.length, 'the wrapper started a server process').toBeGreaterThan(0);
      npm.kill('SIGTERM');
      await new Promise((r) => npm.once('exit', r));
      let left = marked(mark);
      for (let i = 0; i < 50 && left.length > 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        left = marked(mark);
      }
      expect(left, 'processes left running after the npm wrapper was killed').toEqual([]);
      await expect(fetch(url)).rejects.toThrow();
    } finally {
      for (const p of marked(mark)) process.kill(p, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
