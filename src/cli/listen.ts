import type { Server } from 'node:http';
import { CliError, EXIT } from './command.js';
import { watchLauncher } from './launcher.js';

/**
 * Listens on `host:port`, calls `ready` with the server's URL, then waits for
 * SIGTERM or SIGINT and closes the server (a signal that arrives before the
 * server listens is not lost). `cut` also closes open connections at once.
 * A port that cannot be bound is an I/O error (exit 3). Started by `npx`, it
 * also stops when the npm process that started it exits (src/cli/launcher.ts).
 */
export async function serveUntilSignal(server: Server, port: number, host: string, ready: (url: string) => void, options: { readonly cut?: boolean } = {}): Promise<void> {
  let signalled = false;
  let wake: () => void = () => {};
  const onSignal = (): void => {
    signalled = true;
    wake();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const unwatch = watchLauncher(process.env, onSignal);
  try {
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(port, host, () => ok());
    }).catch((e: unknown) => {
      throw new CliError(`cannot listen on ${host}:${port}: ${(e as Error).message}`, EXIT.io, 'TALLY_CLI_IO');
    });
    const a = server.address();
    ready(typeof a === 'object' && a !== null ? `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}` : String(a));
    if (!signalled) await new Promise<void>((r) => (wake = r));
    if (options.cut === true) server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  } finally {
    unwatch();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/**
 * Binds `host:port` for a moment and lets it go: a server that cannot listen
 * says so (exit 3) before it creates or migrates anything. Port 0 always binds.
 */
export async function probeListen(port: number, host: string, what = ''): Promise<void> {
  if (port === 0) return;
  const { createServer } = await import('node:net');
  const probe = createServer();
  await new Promise<void>((ok, fail) => {
    probe.once('error', fail);
    probe.listen({ port, host, exclusive: true }, () => ok());
  }).catch((e: unknown) => {
    throw new CliError(`cannot listen on ${host}:${port}${what}: ${(e as Error).message} (nothing was created or migrated)`, EXIT.io, 'TALLY_CLI_IO');
  });
  await new Promise<void>((r) => probe.close(() => r()));
}
