import { Writable } from 'node:stream';
import { runCli } from '../../src/cli/run.js';

/**
 * Runs the `tally` dispatcher in this process with captured output: the same
 * code path as the binary (argv in, exit code and text out) without a process
 * start-up, for tables of error cases. Each table is tied to the binary by at
 * least one case run through `tally()` as well.
 */
export async function inProcess(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (add: (s: string) => void) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        add(chunk.toString('utf8'));
        done();
      },
    });
  const code = await runCli(args, {
    stdout: sink((x) => (stdout += x)),
    stderr: sink((x) => (stderr += x)),
    env: { TALLY_NO_PROGRESS: '1', ...opts.env },
    cwd: opts.cwd ?? process.cwd(),
  });
  return { code, stdout, stderr };
}
