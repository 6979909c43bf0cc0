// Runs the built `tally` dispatcher (dist/cli/run.js, the code path of the
// binary) once per argument list read as JSON from stdin, in this one process,
// and prints [{code, stdout}] as JSON: the corpus's CLI runner spawns this
// instead of one process per case (node start-up dominates a small verify).
import { Writable } from 'node:stream';
import { runCli } from '../../dist/cli/run.js';

let input = '';
for await (const c of process.stdin) input += c;
const out = [];
for (const args of JSON.parse(input)) {
  let stdout = '';
  const sink = (add) => new Writable({ write(chunk, _e, done) { add(chunk.toString('utf8')); done(); } });
  const code = await runCli(args, { stdout: sink((x) => (stdout += x)), stderr: sink(() => {}), env: { ...process.env, TALLY_NO_PROGRESS: '1' }, cwd: process.cwd() });
  out.push({ code, stdout });
}
process.stdout.write(JSON.stringify(out));
process.exit(0);
