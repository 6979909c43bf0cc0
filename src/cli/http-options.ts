/**
 * The slow-client options every `tally … serve` takes (`tally serve`, `tally
 * judge serve`, `tally witness serve`): one spelling, one parser, one help
 * text, feeding src/http's one copy of the limits.
 */
import { DEFAULT_HTTP_TIMEOUTS, type HttpTimeouts } from '../http/timeouts.js';
import { CliError, str } from './command.js';

/** `--headers-timeout <ms>` and `--request-timeout <ms>`. */
export const TIMEOUT_OPTIONS = {
  'headers-timeout': { type: 'string' },
  'request-timeout': { type: 'string' },
} as const;

/** Help lines for {@link TIMEOUT_OPTIONS}, the option column `width` wide. */
export function timeoutHelp(width = 22): string {
  return [
    `  ${'--headers-timeout <ms>'.padEnd(width)} time a client has to send its headers → 408 (default ${DEFAULT_HTTP_TIMEOUTS.headersTimeoutMs})`,
    `  ${'--request-timeout <ms>'.padEnd(width)} time a client has to send its whole request → 408 (default ${DEFAULT_HTTP_TIMEOUTS.requestTimeoutMs})`,
  ].join('\n');
}

function ms(values: Record<string, unknown>, key: string): number | undefined {
  const v = str(values, key);
  if (v === undefined) return undefined;
  if (!/^[0-9]{1,12}$/.test(v) || Number(v) < 100) throw new CliError(`--${key} must be an integer >= 100`);
  return Number(v);
}

/** The timeouts the options set (absent ones left to the defaults); a usage error for a malformed or too-small value. */
export function timeoutsFromOptions(values: Record<string, unknown>): Partial<HttpTimeouts> {
  const headers = ms(values, 'headers-timeout');
  const request = ms(values, 'request-timeout');
  return { ...(headers === undefined ? {} : { headersTimeoutMs: headers }), ...(request === undefined ? {} : { requestTimeoutMs: request }) };
}
