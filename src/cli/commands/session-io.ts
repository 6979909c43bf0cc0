/**
 * Shared plumbing of the session commands (`tally open/frame/turn/finalize/
 * events/describe`): the store location, option parsing, JSON arguments and
 * how results and diagnostics are printed. The engine and the stores are
 * loaded on use, so `tally --help` stays fast.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { isDigestHex, parseStrictJson } from '../../protocol/index.js';
import type { Judge } from '../../referee/index.js';
import type { Engine, Rejection, TurnRuler } from '../../session/index.js';
import type { TranscriptStore } from '../../store/index.js';
import { CliError, EXIT, println, str, type CommandIO } from '../command.js';

/** Help lines shared by every session command, with the option column `width` wide. */
export function dbHelp(width = 18): string {
  const pad = ' '.repeat(width + 2);
  return [
    `  ${'--db <location>'.padEnd(width)}the store: a SQLite file path, memory: or postgres://…`,
    `${pad}(default: $TALLY_DB, else .tally/tally.db)`,
    `  ${'--json'.padEnd(width)}print the result as JSON`,
  ].join('\n');
}

/** The `--db` / `--json` options every session command takes. */
export const DB_OPTIONS = { db: { type: 'string' }, json: { type: 'boolean' } } as const;

/** The store path used when neither --db nor $TALLY_DB is given (the store layer's DEFAULT_DB_PATH). */
export const CLI_DEFAULT_DB = '.tally/tally.db';

type Values = Record<string, unknown>;

/** An integer option within [min, max], or undefined when absent; a usage error otherwise. */
export function intOption(values: Values, key: string, min: number, max: number): number | undefined {
  const v = str(values, key);
  if (v === undefined) return undefined;
  if (!/^-?(0|[1-9][0-9]{0,15})$/.test(v) || Number(v) < min || Number(v) > max) throw new CliError(`--${key} must be an integer from ${min} to ${max}`);
  return Number(v);
}

/** The required `--session <64 hex>`. */
export function sessionOption(values: Values): string {
  const s = str(values, 'session');
  if (s === undefined) throw new CliError('--session <id> is required (the 64-hex id `tally open` printed)');
  if (!isDigestHex(s)) throw new CliError('--session must be 64 lowercase hex characters');
  return s;
}

/** An optional 64-hex option. */
export function hashOption(values: Values, key: string): string | undefined {
  const s = str(values, key);
  if (s !== undefined && !isDigestHex(s)) throw new CliError(`--${key} must be 64 lowercase hex characters`);
  return s;
}

function isServerLocation(loc: string): boolean {
  return loc === 'memory:' || /^postgres(ql)?:\/\//i.test(loc);
}

/** The store location: `--db`, else `$TALLY_DB`, else `.tally/tally.db` (relative paths against the working directory). */
export function storeLocation(values: Values, io: CommandIO): string {
  const env = io.env['TALLY_DB'];
  const loc = str(values, 'db') ?? (env === undefined || env === '' ? CLI_DEFAULT_DB : env);
  if (loc === '') throw new CliError('--db must not be empty');
  if (isServerLocation(loc)) return loc;
  const path = loc.startsWith('sqlite:') ? loc.slice('sqlite:'.length) : loc;
  return isAbsolute(path) ? path : resolve(io.cwd, path);
}

/**
 * Opens the store and an engine on it, runs `fn`, closes the store. With
 * `mustExist`, a SQLite file that does not exist is an I/O error (exit 3)
 * instead of a new empty database.
 */
export async function withEngine<T>(values: Values, io: CommandIO, mustExist: boolean, fn: (engine: Engine, store: TranscriptStore) => Promise<T>): Promise<T> {
  const location = storeLocation(values, io);
  if (mustExist && !isServerLocation(location) && !existsSync(location)) {
    throw new CliError(`no database at ${location} (create one with 'tally open --db ${location} …')`, EXIT.io, 'TALLY_CLI_IO');
  }
  const { judgeFromOptions } = await import('./judge-option.js');
  const judge = await judgeFromOptions(values, io);
  const { openStore } = await import('../../store/index.js');
  const { createEngine } = await import('../../engine.js');
  const store = await openStore(location);
  try {
    return await fn(createEngine({ store, ruler: await cliRuler(store, judge) }), store);
  } finally {
    await store.close();
  }
}

/**
 * The ruler CLI engines use: the payment referee (x402, §17) over the referee over the store (without a mandate in
 * the spec it rules exactly like the intent ruler), asking the judge of
 * `--judge …` (judgeFromOptions in judge-option.ts) for mandates with semantic rules. Without
 * one, such a mandate denies (judge_unavailable, no_judge).
 */
export async function cliRuler(store: TranscriptStore, judge: Judge | undefined): Promise<TurnRuler> {
  const [{ createRefereeRuler }, { createPaymentsRuler }] = await Promise.all([import('../../referee/index.js'), import('../../payments/index.js')]);
  // The payment referee over the referee: a session whose genesis seals an x402 payment policy (spec.payments) has its
  // payment turns ruled (PROTOCOL.md §17); every other turn, and every other session, is the referee's alone.
  return createPaymentsRuler({ store, inner: createRefereeRuler({ store, ...(judge === undefined ? {} : { judge }) }) });
}

/**
 * A JSON argument: inline JSON, `@file` (a JSON file), or — when `pathOk` — a
 * bare file path. Read by the one strict parser (raw file bytes: no BOM, no
 * invalid UTF-8, no duplicate key, no lone surrogate, at most 64 levels):
 * usage error (exit 2) naming the refusal, I/O error for a missing file.
 */
export function jsonArgument(value: string, io: CommandIO, what: string, pathOk = false): unknown {
  const t = value.trimStart();
  let text: string | Uint8Array = value;
  let source = 'the argument';
  if (t.startsWith('@') || (pathOk && !t.startsWith('{') && !t.startsWith('['))) {
    const p = resolve(io.cwd, t.startsWith('@') ? t.slice(1) : value);
    source = p;
    try {
      text = readFileSync(p);
    } catch (e) {
      throw new CliError(`cannot read ${what} from ${p}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, EXIT.io, 'TALLY_CLI_IO');
    }
  }
  const r = parseStrictJson(text);
  // Input that was read and is not JSON is invalid input (exit 1), as an invalid bundle is: not a usage error.
  if (!r.ok) throw new CliError(`${what} in ${source} is not valid JSON (${r.code}): ${r.message}`, EXIT.invalid, 'TALLY_CLI_INVALID_JSON');
  return r.value;
}

/** Prints a refusal: the diagnostic name on stderr (and the result as JSON on stdout with --json); returns exit 1. */
export function refused(io: CommandIO, command: string, json: boolean, r: Rejection): number {
  if (json) println(io.stdout, JSON.stringify(r));
  println(io.stderr, `tally ${command}: ${r.diagnostic}: ${r.message}`);
  return EXIT.invalid;
}

/** Prints a success: JSON with --json, else the given lines. */
export function printed(io: CommandIO, json: boolean, result: unknown, lines: () => string[]): number {
  if (json) println(io.stdout, JSON.stringify(result));
  else for (const l of lines()) println(io.stdout, l);
  return EXIT.ok;
}
