import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

/** Path of the built `tally` executable (npm test builds before it runs the suite). */
export const TALLY = resolve(import.meta.dirname, '../../dist/cli/main.js');

/** Runs `tally` as a user would, in a child process. */
export function tally(args: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string } = {}) {
  const r = spawnSync(process.execPath, [TALLY, ...args], {
    cwd: opts.cwd ?? process.cwd(),
    // npm_command empty: hints spell plain `tally` even when the suite runs under npm.
    env: { ...process.env, TALLY_NO_PROGRESS: '1', npm_command: '', ...opts.env },
    input: opts.input ?? '',
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
