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
 * A pino logger writing to stderr (synchronously, so no line is lost on exit).
 *
 * @example
 * const log = createLogger({ level: 'info', base: { service: 'tally-serve' } });
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const dest = options.destination ?? 2;
  const stream = typeof dest === 'number' ? pino.destination({ dest, sync: true }) : dest;
  return pino(
    {
      level: options.level ?? 'info',
      base: { pid: process.pid, ...options.base },
      redact: { paths: ['authorization', 'token', 'params', 'bytes', 'text', '*.authorization', '*.token', '*.params', '*.bytes', '*.text'], censor: '[redacted]' },
    },
    stream,
  );
}
