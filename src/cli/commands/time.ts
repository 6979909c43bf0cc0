/** Parsing of `--ordinal` and `--time` for the session commands. */
import { LIMITS } from '../../protocol/index.js';
import { CliError, str } from '../command.js';

/** `--ordinal`: -1 (or `open`) to 2^40; undefined when absent and not required. */
export function ordinalOption(values: Record<string, unknown>, required: boolean): number | undefined {
  const v = str(values, 'ordinal');
  if (v === undefined) {
    if (required) throw new CliError('--ordinal <n> is required (-1 for the OPEN frame: write --ordinal=-1 or --ordinal open)');
    return undefined;
  }
  if (v === 'open' || v === 'OPEN') return -1;
  if (!/^(-1|0|[1-9][0-9]{0,12})$/.test(v) || Number(v) > LIMITS.maxOrdinal) throw new CliError(`--ordinal must be -1 (or open) or an integer from 0 to ${LIMITS.maxOrdinal}`);
  return Number(v);
}

/** `--time`: epoch milliseconds or an ISO-8601 date-time with a zone. */
export function timeOption(values: Record<string, unknown>): number {
  const v = str(values, 'time');
  if (v === undefined) throw new CliError('--time <ms|iso> is required (epoch milliseconds or e.g. 2030-01-01T09:30:00Z)');
  if (/^(0|[1-9][0-9]{0,15})$/.test(v)) {
    const n = Number(v);
    if (Number.isSafeInteger(n)) return n;
  }
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(v)) {
    const n = Date.parse(v);
    if (Number.isSafeInteger(n) && n >= 0) return n;
  }
  throw new CliError('--time must be epoch milliseconds or an ISO-8601 date-time with a zone (e.g. 2030-01-01T09:30:00Z)');
}
