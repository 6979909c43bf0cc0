/**
 * One location string opens any store: `memory:`, a `postgres://` URL or a
 * SQLite file path. The CLI and the server use {@link defaultStoreLocation}
 * when they are not told otherwise.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { TallyError } from '../protocol/errors.js';
import { MemoryStore } from './memory.js';
import { PostgresStore, type PostgresStoreOptions } from './postgres/store.js';
import { SqliteStore, type SqliteStoreOptions } from './sqlite/store.js';
import type { TranscriptStore } from './types.js';

/** Where the embedded SQLite database lives unless `TALLY_DB` says otherwise (relative to the working directory). */
export const DEFAULT_DB_PATH = '.tally/tally.db';

/** The environment variable naming the store location. */
export const STORE_ENV_VAR = 'TALLY_DB';

/** Options of {@link openStore}, passed to the store the location selects. */
export interface OpenStoreOptions {
  readonly sqlite?: SqliteStoreOptions;
  /** `schema` here is overridden by a `?schema=` parameter in the URL. */
  readonly postgres?: Omit<PostgresStoreOptions, 'url'>;
}

/**
 * The store location to use: `env.TALLY_DB` when set and non-empty, else
 * {@link DEFAULT_DB_PATH}.
 *
 * @example
 * const store = await openStore(defaultStoreLocation());
 */
export function defaultStoreLocation(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const v = env[STORE_ENV_VAR];
  return v === undefined || v === '' ? DEFAULT_DB_PATH : v;
}

/**
 * Opens the store a location names:
 * - `memory:` → a fresh {@link MemoryStore} (gone when the process ends);
 * - `postgres://…` or `postgresql://…` → {@link PostgresStore} (a
 *   `?schema=name` parameter selects the schema; it is not sent to the server);
 * - anything else → a {@link SqliteStore} at that file path (an optional
 *   `sqlite:` prefix is dropped), creating parent directories.
 *
 * Without a location, {@link defaultStoreLocation} is used.
 *
 * @example
 * const store = await openStore('postgres://postgres@127.0.0.1:5432/tally?schema=desk1');
 * const engine = createEngine({ store });
 */
export async function openStore(location: string = defaultStoreLocation(), options: OpenStoreOptions = {}): Promise<TranscriptStore> {
  if (typeof location !== 'string' || location === '') throw new TypeError('store location must be a non-empty string');
  if (location === 'memory:') return new MemoryStore();
  if (/^postgres(ql)?:\/\//i.test(location)) {
    const { url, schema } = splitSchema(location);
    const schemaOption = schema ?? options.postgres?.schema;
    return PostgresStore.open({ ...options.postgres, url, ...(schemaOption === undefined ? {} : { schema: schemaOption }) });
  }
  const path = location.startsWith('sqlite:') ? location.slice('sqlite:'.length) : location;
  if (path === '') throw new TypeError('sqlite: location needs a file path');
  if (path !== ':memory:') {
    try {
      // Owner-only, like the key directory: the default .tally/ holds the engine key too.
      mkdirSync(dirname(resolve(path)), { recursive: true, mode: 0o700 });
    } catch (cause) {
      throw new TallyError('TALLY_STORE_OPEN', `Cannot create the directory for ${path}.`, { details: String(cause), cause });
    }
  }
  return new SqliteStore(path, options.sqlite);
}

/**
 * Splits the `?schema=name` parameter off a PostgreSQL URL (the parameter is
 * Tally's, never sent to the server); `schema` is `undefined` without one.
 * Every PostgreSQL location Tally opens (engine store, witness state) reads
 * it here. Throws `TALLY_STORE_OPEN` for a location that is not a URL.
 *
 * @example
 * splitSchema('postgres://h/db?schema=w1'); // { url: 'postgres://h/db', schema: 'w1' }
 */
export function splitSchema(location: string): { url: string; schema: string | undefined } {
  // A multi-host location (h1:5432,h2:5432) is no WHATWG URL: parse it with one stand-in host, then put the list back.
  const many = /^(postgres(?:ql)?:\/\/(?:[^@/?#]*@)?)([^/?#]*,[^/?#]*)(.*)$/i.exec(location);
  if (many) {
    const inner = splitSchema(`${many[1]}tally-host-list${many[3]}`);
    return { url: inner.url.replace('tally-host-list', many[2]!), schema: inner.schema };
  }
  let u: URL;
  try {
    u = new URL(location);
  } catch (cause) {
    throw new TallyError('TALLY_STORE_OPEN', 'The PostgreSQL location is not a valid URL.', { cause });
  }
  const schema = u.searchParams.get('schema') ?? undefined;
  if (schema === undefined) return { url: location, schema };
  u.searchParams.delete('schema');
  return { url: u.toString(), schema };
}
