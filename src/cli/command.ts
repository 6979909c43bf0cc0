/**
 * The shape of one CLI command. Commands never call `process.exit` and never
 * print stack traces for user errors: they write to the given streams and
 * return an exit code (see {@link EXIT}).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { TallyError } from '../protocol/index.js';

/** Exit codes, documented in the README. */
export const EXIT = {
  /** Success (verified, admitted, written). */
  ok: 0,
  /** The input was checked and is invalid (verification failed, a diagnostic was returned). */
  invalid: 1,
  /** Usage error: unknown command or option, missing argument. */
  usage: 2,
  /** I/O error: a file could not be read or written, a store could not be opened. */
  io: 3,
  /** Internal error (a bug): please report it. */
  internal: 70,
} as const;

/** Where a command writes. */
export interface CommandIO {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}

/** One `tally <name>` command. */
export interface Command {
  readonly name: string;
  /** One line for `tally --help`. */
  readonly summary: string;
  /** Full text for `tally <name> --help`. */
  readonly help: string;
  readonly options: NonNullable<ParseArgsConfig['options']>;
  /** Runs with parsed values and positionals; returns the exit code. */
  run(args: { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] }, io: CommandIO): Promise<number>;
}

/** A user error with an exit code; printed as one line, no stack. */
export class CliError extends TallyError {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.usage, code = 'TALLY_CLI_USAGE') {
    super(code, message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** Parses argv for `cmd` strictly (unknown options are usage errors). */
export function parseFor(cmd: Command, argv: string[]): { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] } {
  try {
    const r = parseArgs({ args: argv, options: { ...cmd.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
    return { values: r.values as Record<string, string | boolean | (string | boolean)[] | undefined>, positionals: r.positionals };
  } catch (e) {
    throw new CliError(`${(e as Error).message}\nRun 'tally ${cmd.name} --help' for usage.`);
  }
}

/** Writes one line. */
export function println(stream: NodeJS.WritableStream, line = ''): void {
  stream.write(line + '\n');
}

/** A string option's value, or undefined. */
export function str(values: Record<string, unknown>, key: string): string | undefined {
  const v = values[key];
  return typeof v === 'string' ? v : undefined;
}
