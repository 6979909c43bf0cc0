import { MemoryWitnessStore } from './memory.js';
import { PostgresWitnessStore } from './postgres.js';
import { SqliteWitnessStore } from './sqlite.js';
import type { WitnessStore } from './types.js';

/**
 * Opens witness state by location: `memory:` (tests), `postgres://…` /
 * `postgresql://…` (schema from `?schema=` is not parsed: pass `schema`), or a
 * SQLite file path (the default).
 *
 * @example
 * const store = await openWitnessStore('./witness.db');
 */
export async function openWitnessStore(location: string, options: { readonly schema?: string } = {}): Promise<WitnessStore> {
  if (location === 'memory:') return new MemoryWitnessStore();
  if (/^postgres(ql)?:\/\//.test(location)) return PostgresWitnessStore.open({ url: location, ...(options.schema === undefined ? {} : { schema: options.schema }) });
  return SqliteWitnessStore.open(location);
}
