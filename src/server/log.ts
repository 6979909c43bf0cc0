/**
 * Structured logs (pino, JSON lines) to stderr. What is logged is chosen by
 * the server, never dumped from requests: method, session id, status,
 * refusal type, latency and the token's configured NAME. Tokens, params and
 * authored bytes are never logged; the redaction below is a second fence.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** pino level (default `info`; `silent` for none). */
  readonly level?: string;
  /** Where lines go (default: file descriptor 2, stderr). */
  readonly destination?: NodeJS.WritableStream | number;
  /** Static fields on every line (e.g. `{ service: 'tally-serve' }`). */
  readonly base?: Record<string, unknown>;
}

/**
 * A pino logger writing to stderr. Lines to a file descriptor are written
 * asynchronously (sonic-boom, `sync: false`): a line never blocks the request
 * that logged it, and lines logged while a write is in flight go out together
 * in the next one. None is lost on a normal end: pino flushes the destination
 * synchronously on process `exit` (which also runs after an uncaught
 * exception and after SIGTERM/SIGINT handling ends the process), and pino
 * flushes synchronously after every `fatal` line. Only a process
 * killed outright (SIGKILL, out of memory) can lose the lines of its last
 * write.
 *
 * @example
 * const log = createLogger({ level: 'info', base: { service: 'tally-serve' } });
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const dest = options.destination ?? 2;
  const stream = typeof dest === 'number' ? pino.destination({ dest, sync: false }) : dest;
  return pino(
    {
      level: options.level ?? 'info',
      base: { pid: process.pid, ...options.base },
      redact: { paths: ['authorization', 'token', 'params', 'bytes', 'text', '*.authorization', '*.token', '*.params', '*.bytes', '*.text'], censor: '[redacted]' },
    },
    stream,
  );
}


/**
 * Writes out every line `logger` holds, synchronously, when its destination
 * can (the file-descriptor destination of {@link createLogger}); a no-op for
 * other streams. Called at lifecycle points whose lines a supervisor reads in
 * order with stdout: before `tally serve` prints `listening on …`.
 *
 * @example
 * logger.info({ event: 'listening', url }, 'listening');
 * flushLogSync(logger);
 */
export function flushLogSync(logger: Logger): void {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as { flushSync?: () => void } | undefined;
  if (typeof stream?.flushSync !== 'function') return;
  try {
    stream.flushSync();
  } catch {
    // Not open yet or already closed: the exit flush still runs.
  }
}
