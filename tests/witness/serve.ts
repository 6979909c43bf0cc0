/** Starts a long-running process and waits for its "listening on <url>" line. */
import { spawn, type ChildProcess } from 'node:child_process';

export interface Running {
  readonly child: ChildProcess;
  readonly url: string;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves with the exit code or signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function startListening(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<Running> {
  const child = spawn(process.execPath, args, { cwd: opts.cwd ?? process.cwd(), env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exited.then((e) => reject(new Error(`exited before listening (${e.code ?? e.signal}): ${err}`)));
  });
  return { child, url, stdout: () => out, stderr: () => err, exited };
}
