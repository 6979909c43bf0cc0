/**
 * The CLI dispatcher: finds the command, parses its options strictly, turns
 * user errors into one line on stderr and an exit code, and never prints a
 * stack trace unless TALLY_DEBUG is set.
 */
import { readFileSync } from 'node:fs';
import { TallyError } from '../protocol/index.js';
import { applyRenames, CliError, EXIT, didYouMean, ioProblem, parseFor, println, useColour, wantsJson, type CommandIO, type JsonFailure } from './command.js';
import { COMMAND_GROUPS, COMMANDS } from './commands/index.js';

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const groups = COMMAND_GROUPS.flatMap(([group, title]) => ['', `${title}:`, ...COMMANDS.filter((c) => c.group === group).map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`)]);
  return [
    'Usage: tally <command> [options]',
    '',
    'Tally records an autonomous agent\'s day as a hash-chained, sealed, verifiable transcript.',
    ...groups,
    '',
    "Run 'tally <command> --help' for a command's options; 'tally version' prints the version.",
    'Every command takes --json: its result, or its error as {"ok":false,"code","message","exit"}, on stdout.',
    'Verdicts are coloured on a terminal; NO_COLOR=1 or --no-color turns colour off.',
    'Exit codes: 0 ok, 1 invalid input or refused, 2 usage error, 3 I/O error, 70 internal error.',
  ].join('\n');
}

/** A failure as the dispatcher reports it: human lines for stderr, or one JSON object on stdout under --json. */
interface Failure {
  readonly code: string;
  readonly message: string;
  readonly exit: number;
  /** The human line ends with the code in brackets (an engine error; a CLI error's words stand alone). */
  readonly tagged?: boolean;
  /** Extra human lines (a stack trace under TALLY_DEBUG, the report hint). */
  readonly extra?: readonly string[];
}

function report(io: CommandIO, json: boolean, prefix: string, f: Failure): number {
  if (json) {
    const out: JsonFailure = { ok: false, code: f.code, message: f.message, exit: f.exit };
    println(io.stdout, JSON.stringify(out));
  } else {
    println(io.stderr, `${prefix}${f.message}${f.tagged === true ? ` [${f.code}]` : ''}`);
  }
  for (const l of f.extra ?? []) println(io.stderr, l);
  return f.exit;
}

/** What went wrong, in words, with its stable code and exit code. */
function failureOf(e: unknown, io: CommandIO): Failure {
  if (e instanceof CliError) return { code: e.code, message: e.shortMessage, exit: e.exitCode };
  if (e instanceof TallyError) {
    return {
      code: e.code,
      message: `${e.shortMessage}${e.details ? ` (${e.details})` : ''}`,
      tagged: true,
      exit: e.code.startsWith('TALLY_STORE') || e.code.includes('_IO') ? EXIT.io : EXIT.invalid,
      ...(io.env['TALLY_DEBUG'] ? { extra: [String(e.stack)] } : {}),
    };
  }
  const err = e as NodeJS.ErrnoException;
  if (err && typeof err.code === 'string' && /^E[A-Z]+$/.test(err.code)) {
    const path = typeof err.path === 'string' ? `${err.path}: ` : '';
    return { code: 'TALLY_CLI_IO', message: `cannot read or write ${path}${ioProblem(err)}${path === '' && err.code === 'EISDIR' ? ' (a path given is a directory)' : ''}`, exit: EXIT.io };
  }
  return {
    code: 'TALLY_CLI_INTERNAL',
    message: `internal error: ${(e as Error)?.message ?? String(e)}`,
    exit: EXIT.internal,
    extra: [io.env['TALLY_DEBUG'] ? String((e as Error)?.stack) : 'Set TALLY_DEBUG=1 for a stack trace, and please report this.'],
  };
}

/** Runs `tally` with `argv` (without node and script); returns the exit code. */
export async function runCli(argv: string[], io: CommandIO): Promise<number> {
  // A closed pipe (`tally inspect day.jsonl | head`) ends the output quietly, not with a stack trace.
  io.stdout.on?.('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') io.stderr.write(`tally: cannot write output: ${e.message}\n`);
  });
  const json = wantsJson(argv);
  useColour(io, argv);
  let [name, ...rest] = argv;
  // `tally help <command>` is `tally <command> --help`.
  if (name === 'help' && rest.length > 0) [name, rest] = [rest[0], ['--help']];
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    println(name === undefined ? io.stderr : io.stdout, usage());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === '--version' || name === '-v' || (name === 'version' && (rest.length === 0 || (rest.length === 1 && json)))) {
    println(io.stdout, json ? JSON.stringify({ ok: true, version: version() }) : version());
    return EXIT.ok;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    const guess = didYouMean(name, COMMANDS.map((c) => c.name));
    const message = `unknown command '${name}'${guess === undefined ? '' : ` (did you mean '${guess}'?)`}. Run 'tally --help' for the list.`;
    return report(io, json, 'tally: ', { code: 'TALLY_CLI_USAGE', message, exit: EXIT.usage });
  }
  const cmd = await entry.load();
  try {
    const args = parseFor(cmd, rest);
    if (args.values['help'] === true) {
      println(io.stdout, cmd.help);
      return EXIT.ok;
    }
    applyRenames(cmd, args, io);
    return await cmd.run(args, io);
  } catch (e) {
    return report(io, json, `tally ${cmd.name}: `, failureOf(e, io));
  }
}
