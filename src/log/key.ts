/**
 * The engine log's key and origin: one fixed origin (default
 * `<engine name>/log`) and a key whose note name is that origin, kept in its
 * own file (default `$TALLY_LOG_KEY`, else `.tally/log.key`; created
 * owner-only on first use, like the engine key). The key's name IS the
 * origin: an existing key file names its own, and one under another name
 * than an origin asked for is refused.
 */
import { resolve } from 'node:path';
import { TallyError } from '../protocol/index.js';
import { DEFAULT_ENGINE_NAME, ENGINE_NAME_ENV_VAR } from '../receipt/config.js';
import type { EngineKey } from '../receipt/keys/engineKey.js';
import { loadEngineKeyFile, loadOrCreateEngineKey } from '../receipt/keys/keyFile.js';

/** Where the log key lives by default (relative to the working directory). */
export const DEFAULT_LOG_KEY_PATH = '.tally/log.key';
/** The environment variable naming the log key file. */
export const LOG_KEY_ENV_VAR = 'TALLY_LOG_KEY';
/** The environment variable naming the log's origin. */
export const LOG_ORIGIN_ENV_VAR = 'TALLY_LOG_ORIGIN';

/** The default origin of an engine's log: `<engine name>/log`. */
export function defaultLogOrigin(engineName: string): string {
  return `${engineName}/log`;
}

/** Options of {@link loadLogKey}. */
export interface LoadLogKeyOptions {
  /** The key file (default `$TALLY_LOG_KEY`, else `.tally/log.key`). */
  readonly path?: string;
  /** The log's origin = the key's name (default `$TALLY_LOG_ORIGIN`, else `<engine name>/log`). */
  readonly origin?: string;
  /** The engine name the default origin derives from (default `$TALLY_ENGINE_NAME`, else `tally.local`). */
  readonly engineName?: string;
  /** Create the key file when missing (default true). */
  readonly create?: boolean;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
}

/**
 * Loads (or creates) the log key. Throws the key file's `TallyError`s; a file
 * whose key has another name than the origin is refused by the name check.
 *
 * @example
 * const key = await loadLogKey({ engineName: 'tally.example/desk' }); // key.name === 'tally.example/desk/log'
 */
export async function loadLogKey(options: LoadLogKeyOptions = {}): Promise<EngineKey> {
  const env = options.env ?? process.env;
  const path = resolve(options.cwd ?? process.cwd(), options.path ?? (env[LOG_KEY_ENV_VAR] || DEFAULT_LOG_KEY_PATH));
  const asked = options.origin ?? (env[LOG_ORIGIN_ENV_VAR] || undefined);
  const origin = asked ?? defaultLogOrigin(options.engineName ?? (env[ENGINE_NAME_ENV_VAR] || DEFAULT_ENGINE_NAME));
  if (asked === undefined) {
    // No origin asked for: an existing key file names its own (a PEM file, which names none, takes the default).
    try {
      return await loadEngineKeyFile(path);
    } catch (e) {
      if (!(e instanceof TallyError) || (e.code !== 'TALLY_KEY_FILE_NOT_FOUND' && e.code !== 'TALLY_KEY_NAME_REQUIRED')) throw e;
      if (e.code === 'TALLY_KEY_FILE_NOT_FOUND' && options.create === false) throw e;
    }
  }
  return options.create === false ? loadEngineKeyFile(path, origin) : loadOrCreateEngineKey(path, origin);
}
