/**
 * Where the engine key lives and what it is called, from the environment:
 * `TALLY_KEY` (path of the key file, default `.tally/engine.key`) and
 * `TALLY_ENGINE_NAME` (the note key name, default `tally.local`).
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { TallyError } from '../protocol/errors.js';
import { loadEngineKeyFile, loadOrCreateEngineKey } from './keys/keyFile.js';
import type { EngineKey } from './keys/engineKey.js';
import { PRIVATE_KEY_PREFIX } from './note/layout.js';
import { parseVerifierKey } from './note/verifierKey.js';
import type { ParsedVerifierKey } from './note/types.js';

/** Default path of the engine key file, relative to the working directory. */
export const DEFAULT_KEY_PATH = '.tally/engine.key';
/** Environment variable naming the engine key file. */
export const KEY_ENV_VAR = 'TALLY_KEY';
/** Environment variable naming the engine (its note key name, the first part of every checkpoint origin). */
export const ENGINE_NAME_ENV_VAR = 'TALLY_ENGINE_NAME';
/** Engine name used when a key is generated and no name is configured. */
export const DEFAULT_ENGINE_NAME = 'tally.local';

type Env = Readonly<Record<string, string | undefined>>;

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/**
 * The engine key path: `env.TALLY_KEY` when set and non-empty, else `.tally/engine.key`.
 *
 * @example
 * engineKeyPath({ TALLY_KEY: '/etc/tally/engine.key' })  // '/etc/tally/engine.key'
 */
export function engineKeyPath(env: Env = process.env): string {
  return nonEmpty(env[KEY_ENV_VAR]) ?? DEFAULT_KEY_PATH;
}

/** The configured engine name (`env.TALLY_ENGINE_NAME`), or `undefined` when unset. */
export function configuredEngineName(env: Env = process.env): string | undefined {
  return nonEmpty(env[ENGINE_NAME_ENV_VAR]);
}

/** Options of {@link loadEngineKey}. */
export interface LoadEngineKeyOptions {
  /** Key file path (default: {@link engineKeyPath}); relative paths resolve against `cwd`. */
  readonly path?: string;
  /** Engine name the key must carry (default: `TALLY_ENGINE_NAME`, else whatever the file says). */
  readonly name?: string;
  /** Generate and store a key when the file does not exist (default true). */
  readonly create?: boolean;
  readonly env?: Env;
  readonly cwd?: string;
}

/**
 * Loads the engine key: from the key file (a `PRIVATE+KEY+…` line, or a PKCS#8
 * PEM that takes its name from `TALLY_ENGINE_NAME` or `tally.local`), or — on
 * first use, when `create` is not false — generates one under the configured
 * name (default `tally.local`) and stores it with owner-only permissions
 * (directory 0700, file 0600). Throws the `TALLY_KEY_*` errors of
 * `loadEngineKeyFile` (`TALLY_KEY_FILE_NOT_FOUND` when `create` is false, a
 * group-readable file, a name other than the configured one, …).
 *
 * @example
 * const key = await loadEngineKey();          // .tally/engine.key, created if missing
 * const notary = createNotary({ key });
 */
export async function loadEngineKey(options: LoadEngineKeyOptions = {}): Promise<EngineKey> {
  const env = options.env ?? process.env;
  const path = resolve(options.cwd ?? process.cwd(), options.path ?? engineKeyPath(env));
  const name = options.name ?? configuredEngineName(env);
  try {
    return await loadEngineKeyFile(path, name);
  } catch (e) {
    if (!(e instanceof TallyError)) throw e;
    if (e.code === 'TALLY_KEY_NAME_REQUIRED') return loadEngineKeyFile(path, DEFAULT_ENGINE_NAME);
    if (e.code !== 'TALLY_KEY_FILE_NOT_FOUND' || options.create === false) throw e;
  }
  return loadOrCreateEngineKey(path, name ?? DEFAULT_ENGINE_NAME);
}

/**
 * Resolves verifier keys given on a command line or in a config: either a
 * verifier key string `name+hex8+base64`, or the path of a file holding one
 * verifier key per line (blank lines and `#` comments ignored). Throws
 * `TALLY_VERIFIER_KEY_INVALID` for anything else — including a private key,
 * which is refused without being echoed — and `TALLY_VERIFIER_KEY_IO` when
 * the file cannot be read.
 *
 * @example
 * const [engine] = await resolveVerifierKeys('tally.local+1a2b3c4d+AV…');
 */
export async function resolveVerifierKeys(arg: string, cwd: string = process.cwd()): Promise<ParsedVerifierKey[]> {
  if (typeof arg !== 'string' || arg.trim() === '') throw new TallyError('TALLY_VERIFIER_KEY_INVALID', 'A verifier key (name+keyid+base64) or a file of them is required.');
  const s = arg.trim();
  if (s.startsWith(PRIVATE_KEY_PREFIX)) throw privateKeyGiven('the argument');
  const direct = parseVerifierKey(s);
  if (direct.ok) return [direct.verifier];
  if (/\+[0-9a-fA-F]{8}\+/.test(s)) {
    throw new TallyError('TALLY_VERIFIER_KEY_INVALID', `Verifier key ${s.split('+')[0]}+… does not parse: ${direct.message}.`);
  }
  let text: string;
  try {
    text = await readFile(resolve(cwd, s), 'utf8');
  } catch (cause) {
    throw new TallyError('TALLY_VERIFIER_KEY_IO', 'Not a verifier key, and no readable file of that name.', { details: s, cause });
  }
  const keys: ParsedVerifierKey[] = [];
  let lineNo = 0;
  for (const raw of text.split('\n')) {
    lineNo++;
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith(PRIVATE_KEY_PREFIX)) throw privateKeyGiven(`${s} line ${lineNo}`);
    const r = parseVerifierKey(line);
    if (!r.ok) throw new TallyError('TALLY_VERIFIER_KEY_INVALID', `Line ${lineNo} of ${s} is not a verifier key: ${r.message}.`);
    keys.push(r.verifier);
  }
  if (keys.length === 0) throw new TallyError('TALLY_VERIFIER_KEY_INVALID', `${s} holds no verifier key.`);
  return keys;
}

function privateKeyGiven(where: string): TallyError {
  return new TallyError('TALLY_VERIFIER_KEY_INVALID', `${where} is a PRIVATE key; give the verifier key instead (tally checkpoint --print-key), and keep the private key secret.`);
}
