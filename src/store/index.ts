/** `agent-tally/store`: the transcript storage contract and its implementations. */
export { MemoryStore } from './memory.js';
export type {
  TranscriptStore,
  StoredEntry,
  SessionHead,
  NonceClaim,
  NonceOwner,
  ReserveOutcome,
  AppendRequest,
  AppendOutcome,
  SigningLogStore,
  CosignatureStore,
  CosignatureRecord,
  SignedCheckpointRecord,
  ExpectedLatest,
  RecordCheckpointOutcome,
  StoreHealth,
  ReplicationStatus,
  EngineLogStore,
  EngineLogKeyRecord,
  EngineLogTileStore,
  StorePosition,
  ContinuityEvent,
  ContinuityState,
  ContinuityStore,
} from './types.js';
export { hasEngineLog, hasContinuity } from './types.js';
export { SqliteStore } from './sqlite/store.js';
export { ScratchStore } from './scratch.js';
export type { ScratchStoreOptions } from './scratch.js';
export type { SqliteStoreOptions, SqliteStoreStats } from './sqlite/store.js';
export { SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION } from './sqlite/migrations.js';
export type { SqliteMigration } from './sqlite/migrations.js';
export { PostgresStore, DEFAULT_PG_SCHEMA } from './postgres/store.js';
export type { PostgresStoreOptions } from './postgres/store.js';
export { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION } from './postgres/migrations.js';
export type { PostgresMigration } from './postgres/migrations.js';
export { openStore, defaultStoreLocation, DEFAULT_DB_PATH, STORE_ENV_VAR } from './open.js';
export type { OpenStoreOptions } from './open.js';
