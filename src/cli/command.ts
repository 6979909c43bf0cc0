/**
 * The shape of one CLI command. Commands never call `process.exit` and never
 * print stack traces for user errors: they write to the given streams and
 * return an exit code (see {@link EXIT}).
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
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
  /**
   * Options renamed in this release (old name → new name, for the given
   * positionals): the old spelling still works, with a one-line notice on
   * stderr, until the next release. See {@link applyRenames}.
   */
  readonly renamedOptions?: (positionals: readonly string[]) => Readonly<Record<string, string>>;
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

/** Edit distance between two short strings (for "did you mean"). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/** The closest of `known` to `word` when it is close enough to be a typo, else undefined. */
export function didYouMean(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const d = distance(word, k);
    if (d < bestD) [best, bestD] = [k, d];
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}

/**
 * Rewrites `--opt -1` (a string option followed by a negative integer) to
 * `--opt=-1`: no option is spelled like a number, so the value is not ambiguous.
 */
function joinNegativeValues(cmd: Command, argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    if (a === '--') return [...out, ...argv.slice(i)];
    const name = a.startsWith('--') && !a.includes('=') ? a.slice(2) : undefined;
    if (name !== undefined && cmd.options[name]?.type === 'string' && next !== undefined && /^-[0-9]+$/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else {
      out.push(a);
    }
  }
  return out;
}

/** Parses argv for `cmd` strictly (unknown options are usage errors, with a did-you-mean). */
export function parseFor(cmd: Command, argv: string[]): { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] } {
  // --help, --json and --no-color are the framework's: every command takes them (see wantsJson, jsonMode, useColour).
  const options = { json: { type: 'boolean' }, 'no-color': { type: 'boolean' }, ...cmd.options, help: { type: 'boolean', short: 'h' } } as const;
  try {
    const r = parseArgs({ args: joinNegativeValues(cmd, argv), options, allowPositionals: true, strict: true, tokens: true });
    // A single-valued option given twice is a usage error, never "last wins" on an append-only log.
    const seen = new Set<string>();
    for (const t of r.tokens) {
      if (t.kind !== 'option' || (options as Record<string, { multiple?: boolean }>)[t.name]?.multiple === true) continue;
      if (seen.has(t.name)) throw new CliError(`--${t.name} was given more than once; give it once\nRun 'tally ${cmd.name} --help' for usage.`);
      seen.add(t.name);
    }
    return { values: r.values as Record<string, string | boolean | (string | boolean)[] | undefined>, positionals: r.positionals };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const help = `Run 'tally ${cmd.name} --help' for usage.`;
    const unknown = /^Unknown option '(-{1,2}[^']*)'/.exec(err.message);
    if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) {
      const given = unknown[1]!;
      const guess = didYouMean(given.replace(/^-+/, ''), Object.keys(options));
      throw new CliError(`unknown option ${given}${guess === undefined ? '' : ` (did you mean --${guess}?)`}\n${help}`);
    }
    const ambiguous = /^Option '(--[^']+)' argument is ambiguous/.exec(err.message);
    if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && ambiguous) {
      throw new CliError(`${ambiguous[1]} needs a value; to give one that starts with '-', write ${ambiguous[1]}=<value>\n${help}`);
    }
    const missing = /^Option '(?:-\w, )?(--[^ ']+)(?: <value>)?' argument missing/.exec(err.message);
    if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && missing) throw new CliError(`${missing[1]} needs a value\n${help}`);
    throw new CliError(`${err.message}\n${help}`);
  }
}

/**
 * Moves the value of an old option spelling to its new name (and says so on
 * stderr, one line); both spellings at once is a usage error.
 */
export function applyRenames(cmd: Command, args: { values: Record<string, unknown>; positionals: string[] }, io: CommandIO): void {
  for (const [old, now] of Object.entries(cmd.renamedOptions?.(args.positionals) ?? {})) {
    if (args.values[old] === undefined) continue;
    if (args.values[now] !== undefined) throw new CliError(`give --${now} only (--${old} is its old spelling here)\nRun 'tally ${cmd.name} --help' for usage.`);
    args.values[now] = args.values[old];
    delete args.values[old];
    println(io.stderr, `tally ${cmd.name}: --${old} here is now --${now} (a verifier key, not a private key file); --${old} is accepted until the next release`);
  }
}

/**
 * How the person runs tally, for the commands a hint suggests: `npx tally`
 * when npm started us (`npm start`, `npx tally …`, where `tally` alone is not on
 * the PATH), else `tally`.
 */
export function invocation(io: CommandIO): string {
  return io.env['npm_command'] !== undefined && io.env['npm_command'] !== '' ? 'npx tally' : 'tally';
}

/**
 * True when argv asks for JSON output (`--json` before any `--`). Read from the
 * raw arguments, so a usage error found while parsing them is JSON too.
 */
export function wantsJson(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--json') return true;
  }
  return false;
}

/** True when the parsed options ask for JSON output. */
export function jsonMode(values: Record<string, unknown>): boolean {
  return values['json'] === true;
}

/** The one JSON shape of a failure under --json: `{"ok":false,"code","message","exit"}` (code stable, exit = the exit code). */
export interface JsonFailure {
  readonly ok: false;
  readonly code: string;
  readonly message: string;
  readonly exit: number;
}

/**
 * Prints a command's result: with --json the object as one line on stdout,
 * else the human lines. Returns EXIT.ok.
 */
export function emit(io: CommandIO, values: Record<string, unknown>, result: object, lines: () => readonly string[]): number {
  if (jsonMode(values)) println(io.stdout, JSON.stringify(result));
  else for (const l of lines()) println(io.stdout, l);
  return EXIT.ok;
}

/** The streams verdicts are coloured on (set per run by {@link useColour}). */
const COLOURED = new WeakSet<object>();

/**
 * Decides, once per run, whether each stream shows verdicts in colour: only a
 * terminal (never a pipe or a file), and never when $NO_COLOR is set to
 * anything non-empty (no-color.org) or --no-color was given.
 */
export function useColour(io: CommandIO, argv: readonly string[]): void {
  const off = (io.env['NO_COLOR'] ?? '') !== '' || argv.slice(0, argv.includes('--') ? argv.indexOf('--') : undefined).includes('--no-color');
  for (const stream of [io.stdout, io.stderr]) {
    if (!off && stream.isTTY === true) COLOURED.add(stream);
    else COLOURED.delete(stream);
  }
}

/** A verdict at the start of a line, and its colour (SGR): pinned-valid green, unpinned yellow, failures red. */
const VERDICTS: readonly (readonly [RegExp, string])[] = [
  [/^valid, unpinned\b/, '33'],
  [/^(?:valid|replayed|verified)\b[^:,]*/, '32'],
  [/^(?:invalid|diverged|refused|equivocation)\b[^:]*/, '31'],
];

/** The line with its leading verdict word coloured (bold), or unchanged when it starts with none. */
export function paintVerdict(line: string): string {
  for (const [re, sgr] of VERDICTS) {
    const m = re.exec(line);
    if (m) return `\x1b[1;${sgr}m${m[0]}\x1b[0m${line.slice(m[0].length)}`;
  }
  return line;
}

/** Writes one line (its verdict coloured when the stream is a terminal that takes colour). */
export function println(stream: NodeJS.WritableStream, line = ''): void {
  stream.write((COLOURED.has(stream) ? paintVerdict(line) : line) + '\n');
}

/** A string option's value, or undefined. */
export function str(values: Record<string, unknown>, key: string): string | undefined {
  const v = values[key];
  return typeof v === 'string' ? v : undefined;
}

/**
 * The absolute path of an input file that must exist and be a regular file:
 * an I/O error (exit 3) in words otherwise ("no such file", "is a directory").
 */
export function inputFile(path: string, io: CommandIO, what: string): string {
  const p = resolve(io.cwd, path);
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(p);
  } catch (e) {
    throw new CliError(`cannot read ${what} ${p}: ${ioProblem(e as NodeJS.ErrnoException)}`, EXIT.io, 'TALLY_CLI_IO');
  }
  if (!st.isFile()) throw new CliError(`cannot read ${what} ${p}: ${st.isDirectory() ? 'it is a directory, not a file' : 'not a regular file'}`, EXIT.io, 'TALLY_CLI_IO');
  return p;
}

/** A file-system error in words. */
export function ioProblem(e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case 'ENOENT':
      return 'no such file';
    case 'EISDIR':
      return 'it is a directory, not a file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOTDIR':
      return 'a parent of it is not a directory';
    default:
      return e.code ?? e.message;
  }
}
