import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

/** Path of the built `tally` executable (npm test builds before it runs the suite). */
export const TALLY = resolve(import.meta.dirname, '../../dist/cli/main.js');

/** Runs `tally` as a user would, in a child process. */
export function tally(args: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string } = {}) {
  const r = spawnSync(process.execPath, [TALLY, ...args], {
    cwd: opts.cwd ?? process.cwd(),
    env: { ...process.env, TALLY_NO_PROGRESS: '1', ...opts.env },
    input: opts.input ?? '',
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
