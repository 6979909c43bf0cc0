import { splitSchema } from '../../store/open.js';
import { MemoryWitnessStore } from './memory.js';
import { PostgresWitnessStore } from './postgres.js';
import { SqliteWitnessStore } from './sqlite.js';
import type { WitnessStore } from './types.js';

/**
 * Opens witness state by location: `memory:` (tests), `postgres://…` /
 * `postgresql://…` (the schema named by a `?schema=` parameter, read as the
 * engine's store reads it; else `options.schema`, else `tally_witness`), or a
 * SQLite file path (the default).
 *
 * @example
 * const store = await openWitnessStore('./witness.db');
 */
export async function openWitnessStore(location: string, options: { readonly schema?: string } = {}): Promise<WitnessStore> {
  if (location === 'memory:') return new MemoryWitnessStore();
  if (/^postgres(ql)?:\/\//i.test(location)) {
    const { url, schema: fromUrl } = splitSchema(location);
    const schema = fromUrl ?? options.schema;
    return PostgresWitnessStore.open({ url, ...(schema === undefined ? {} : { schema }) });
  }
  return SqliteWitnessStore.open(location);
}
