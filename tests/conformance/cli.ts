/**
 * Spawning the built `tally` for the corpus runners: one child runs the
 * dispatcher for a whole batch of argument lists (tests/conformance/cli-batch.mjs),
 * so node start-up is paid once per runner, not once per case.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** Runs `cmd args` with `input` on stdin; resolves with its stdout. */
export function spawnOut(cmd: string, args: string[], input = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { env: { ...process.env, TALLY_NO_PROGRESS: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    p.on('error', reject);
    p.on('close', () => resolve(out));
    p.stdin.end(input);
  });
}

/** One `tally` run of a batch: its exit code and stdout. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
}

/** Runs `tally <args>` for every argument list in one spawned process. */
export async function cliBatch(argv: readonly (readonly string[])[]): Promise<CliRun[]> {
  return JSON.parse(await spawnOut(process.execPath, [join(import.meta.dirname, 'cli-batch.mjs')], JSON.stringify(argv))) as CliRun[];
}
