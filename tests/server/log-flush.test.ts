/**
 * Logs are written asynchronously (src/server/log.ts) and none is lost: a
 * server stopped by SIGTERM right after a burst of calls has logged every
 * call; a process that ends on its own has written every line; a fatal line
 * is on disk before the process can be killed outright.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TOKENS, cleanup, ok, rpc, startServer, tempDir } from './helpers.js';

afterAll(cleanup);

const LOG_JS = resolve(import.meta.dirname, '../../dist/server/log.js');

/** Runs `script` (an ES module body) in a fresh node process; resolves with its exit code or signal. */
function runNode(script: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', fail);
    child.once('exit', (code, signal) => done(signal ?? String(code)));
  });
}

const lines = (text: string): Record<string, unknown>[] => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);

describe('asynchronous logs lose no line', () => {
  it('SIGTERM right after a burst of calls: every answered call is in the log, then the shutdown and stopped lines', async () => {
    const srv = await startServer({ db: 'memory:', args: ['--rate', '100000', '--burst', '100000'] });
    const N = 60;
    const opened = await Promise.all(Array.from({ length: N }, (_, i) => rpc(srv.url, TOKENS.runtime, 'session/open', { spec: { name: `log-${i}` } })));
    const frames = await Promise.all(opened.map((r) => rpc(srv.url, TOKENS.runtime, 'session/frame', { sessionId: ok<{ sessionId: string }>(r).sessionId, ordinal: -1, time: 1 })));
    for (const f of frames) expect(f.status).toBe(200);
    expect(await srv.stop('SIGTERM')).toBe(0);
    const log = lines(srv.stderr());
    expect(log.filter((l) => l['msg'] === 'call' && l['method'] === 'session/open')).toHaveLength(N);
    expect(log.filter((l) => l['msg'] === 'call' && l['method'] === 'session/frame')).toHaveLength(N);
    expect(log.some((l) => l['event'] === 'shutdown' && l['signal'] === 'SIGTERM')).toBe(true);
    expect(log.at(-1)).toMatchObject({ event: 'stopped' });
  });

  it('a process that ends on its own has written every line it logged', async () => {
    const file = join(tempDir('log-flush'), 'end.log');
    const N = 20_000;
    const result = await runNode(`
      import { openSync } from 'node:fs';
      const { createLogger } = await import(${JSON.stringify(LOG_JS)});
      const log = createLogger({ destination: openSync(${JSON.stringify(file)}, 'w') });
      for (let i = 0; i < ${N}; i++) log.info({ i }, 'line');
      process.exitCode = 0;
    `);
    expect(result).toBe('0');
    const got = lines(readFileSync(file, 'utf8'));
    expect(got).toHaveLength(N);
    expect(got.map((l) => l['i'])).toEqual(Array.from({ length: N }, (_, i) => i));
  });

  it('process.exit() right after logging: the exit flush writes every line', async () => {
    const file = join(tempDir('log-flush'), 'exit.log');
    const result = await runNode(`
      import { openSync } from 'node:fs';
      const { createLogger } = await import(${JSON.stringify(LOG_JS)});
      const log = createLogger({ destination: openSync(${JSON.stringify(file)}, 'w') });
      for (let i = 0; i < 5000; i++) log.info({ i }, 'line');
      process.exit(3);
    `);
    expect(result).toBe('3');
    expect(lines(readFileSync(file, 'utf8'))).toHaveLength(5000);
  });

  it('a fatal line is on disk before the process is killed outright (SIGKILL runs no exit handler)', async () => {
    const file = join(tempDir('log-flush'), 'fatal.log');
    const result = await runNode(`
      import { openSync } from 'node:fs';
      const { createLogger } = await import(${JSON.stringify(LOG_JS)});
      const log = createLogger({ destination: openSync(${JSON.stringify(file)}, 'w') });
      for (let i = 0; i < 5000; i++) log.info({ i }, 'line');
      log.fatal({ event: 'dying' }, 'fatal');
      process.kill(process.pid, 'SIGKILL');
    `);
    expect(result).toBe('SIGKILL');
    const got = lines(readFileSync(file, 'utf8'));
    expect(got.at(-1)).toMatchObject({ event: 'dying', level: 60 });
    expect(got).toHaveLength(5001);
  });
});
