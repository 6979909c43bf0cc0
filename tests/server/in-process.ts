/**
 * An in-process `WireServer` on loopback (real HTTP, real engine on a memory
 * store, real auth with the test tokens), its JSON log lines collected in
 * memory. For tests that need to inject what a child process cannot take: a
 * clock, small timeouts, a process-warning listener.
 */
import { Writable } from 'node:stream';
import { createEngine } from '../../src/engine.js';
import { Authenticator, parseAuthConfig } from '../../src/server/auth.js';
import { createWireServer, type WireServer } from '../../src/server/http.js';
import type { WireServerLimits } from '../../src/server/limits.js';
import { createLogger } from '../../src/server/log.js';
import { MemoryStore } from '../../src/store/index.js';
import { authDoc } from './helpers.js';

/** A running in-process server. */
export interface InProcessServer {
  readonly server: WireServer;
  readonly url: string;
  readonly port: number;
  /** Log lines so far, parsed. */
  readonly log: Record<string, unknown>[];
}

/** Starts a server on 127.0.0.1, port 0. */
export async function startInProcess(opts: { limits?: Partial<WireServerLimits>; pollMs?: number; clock?: () => number; auth?: object } = {}): Promise<InProcessServer> {
  const cfg = parseAuthConfig(opts.auth ?? authDoc());
  if (!cfg.ok) throw new Error(cfg.problem);
  const log: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') log.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const server = createWireServer({
    engine: createEngine({ store: new MemoryStore() }),
    auth: new Authenticator(cfg.config),
    logger: createLogger({ destination: stream }),
    ...(opts.limits === undefined ? {} : { limits: opts.limits }),
    ...(opts.pollMs === undefined ? {} : { pollMs: opts.pollMs }),
    ...(opts.clock === undefined ? {} : { clock: opts.clock }),
  });
  const { url, port } = await server.listen(0, '127.0.0.1');
  return { server, url, port, log };
}
