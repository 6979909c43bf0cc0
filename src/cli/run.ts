/**
 * The CLI dispatcher: finds the command, parses its options strictly, turns
 * user errors into one line on stderr and an exit code, and never prints a
 * stack trace unless TALLY_DEBUG is set.
 */
import { readFileSync } from 'node:fs';
import { TallyError } from '../protocol/index.js';
import { CliError, EXIT, didYouMean, ioProblem, parseFor, println, type CommandIO } from './command.js';
import { COMMANDS } from './commands/index.js';

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
  return [
    'Usage: tally <command> [options]',
    '',
    'Tally records an autonomous agent\'s day as a hash-chained, sealed, verifiable transcript.',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run 'tally <command> --help' for a command's options; 'tally version' prints the version.",
    'Exit codes: 0 ok, 1 invalid input or refused, 2 usage error, 3 I/O error, 70 internal error.',
  ].join('\n');
}

/** Runs `tally` with `argv` (without node and script); returns the exit code. */
export async function runCli(argv: string[], io: CommandIO): Promise<number> {
  // A closed pipe (`tally inspect day.jsonl | head`) ends the output quietly, not with a stack trace.
  io.stdout.on?.('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') io.stderr.write(`tally: cannot write output: ${e.message}\n`);
  });
  let [name, ...rest] = argv;
  // `tally help <command>` is `tally <command> --help`.
  if (name === 'help' && rest.length > 0) [name, rest] = [rest[0], ['--help']];
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    println(name === undefined ? io.stderr : io.stdout, usage());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === '--version' || name === '-v' || (name === 'version' && rest.length === 0)) {
    println(io.stdout, version());
    return EXIT.ok;
  }
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    const guess = didYouMean(name, COMMANDS.map((c) => c.name));
    println(io.stderr, `tally: unknown command '${name}'${guess === undefined ? '' : ` (did you mean '${guess}'?)`}. Run 'tally --help' for the list.`);
    return EXIT.usage;
  }
  const cmd = await entry.load();
  try {
    const args = parseFor(cmd, rest);
    if (args.values['help'] === true) {
      println(io.stdout, cmd.help);
      return EXIT.ok;
    }
    return await cmd.run(args, io);
  } catch (e) {
    if (e instanceof CliError) {
      println(io.stderr, `tally ${cmd.name}: ${e.shortMessage}`);
      return e.exitCode;
    }
    if (e instanceof TallyError) {
      println(io.stderr, `tally ${cmd.name}: ${e.shortMessage}${e.details ? ` (${e.details})` : ''} [${e.code}]`);
      if (io.env['TALLY_DEBUG']) println(io.stderr, String(e.stack));
      return e.code.startsWith('TALLY_STORE') || e.code.includes('_IO') ? EXIT.io : EXIT.invalid;
    }
    const err = e as NodeJS.ErrnoException;
    if (err && typeof err.code === 'string' && /^E[A-Z]+$/.test(err.code)) {
      const path = typeof err.path === 'string' ? `${err.path}: ` : '';
      println(io.stderr, `tally ${cmd.name}: cannot read or write ${path}${ioProblem(err)}${path === '' && err.code === 'EISDIR' ? ' (a path given is a directory)' : ''}`);
      return EXIT.io;
    }
    println(io.stderr, `tally ${cmd.name}: internal error: ${(e as Error)?.message ?? String(e)}`);
    if (io.env['TALLY_DEBUG']) println(io.stderr, String((e as Error)?.stack));
    else println(io.stderr, 'Set TALLY_DEBUG=1 for a stack trace, and please report this.');
    return EXIT.internal;
  }
}
