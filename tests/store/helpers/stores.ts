/**
 * The three stores under one test interface: a factory makes a fresh, empty
 * store; `reopen` closes it and opens the same database again (durable
 * stores only); `reset` empties it; `dispose` closes and deletes everything.
 */
import { join } from 'node:path';
import { MemoryStore, PostgresStore, ScratchStore, SqliteStore, type TranscriptStore } from '../../../src/store/index.js';
import pg from 'pg';
import { PG_URL, dropSchema, freshSchemaName, pgReady, pgTruncateAsOperator } from './pg.js';
import { tempDir } from './tmp.js';

/** A fresh store and how to reopen and remove it. */
export interface StoreEnv {
  store: TranscriptStore;
  readonly durable: boolean;
  /** Closes the store and opens the same database again (durable stores). */
  reopen(): Promise<TranscriptStore>;
  /** Empties the store (a fresh database, or the same schema truncated). */
  reset(): Promise<void>;
  /** Closes the store and removes its data. */
  dispose(): Promise<void>;
}

/** One kind of store. */
export interface StoreKind {
  readonly label: 'memory' | 'sqlite' | 'postgres';
  /** Why this kind is skipped here, if it is. */
  readonly skip: boolean;
  fresh(): Promise<StoreEnv>;
}

let counter = 0;

export const memoryKind: StoreKind = {
  label: 'memory',
  skip: false,
  async fresh() {
    const env: StoreEnv = {
      store: new MemoryStore(),
      durable: false,
      async reopen() {
        return env.store;
      },
      async reset() {
        await env.store.close();
        env.store = new MemoryStore();
      },
      async dispose() {
        await env.store.close();
      },
    };
    return env;
  },
};

export const sqliteKind: StoreKind = {
  label: 'sqlite',
  skip: false,
  async fresh() {
    const dir = tempDir('sqlite');
    let file = join(dir, `t${counter++}.db`);
    const env: StoreEnv = {
      store: new SqliteStore(file),
      durable: true,
      async reopen() {
        await env.store.close();
        env.store = new SqliteStore(file);
        return env.store;
      },
      async reset() {
        await env.store.close();
        file = join(dir, `t${counter++}.db`);
        env.store = new SqliteStore(file);
      },
      async dispose() {
        await env.store.close();
      },
    };
    return env;
  },
};

/**
 * The replay's scratch store (one process, not durable), with a batch of 3
 * so the command sequences cross its write-behind buffer many times. Not in
 * {@link STORE_KINDS}: it is never shared between connections.
 */
export const scratchKind: Omit<StoreKind, 'label'> & { readonly label: 'scratch' } = {
  label: 'scratch',
  skip: false,
  async fresh() {
    const dir = tempDir('scratch');
    const make = () => new ScratchStore(join(dir, `s${counter++}.db`), { batch: 3 });
    const env: StoreEnv = {
      store: make(),
      durable: false,
      async reopen() {
        return env.store;
      },
      async reset() {
        await env.store.close();
        env.store = make();
      },
      async dispose() {
        await env.store.close();
      },
    };
    return env;
  },
};

export const postgresKind: StoreKind = {
  label: 'postgres',
  skip: !pgReady,
  async fresh() {
    const schema = freshSchemaName(`k${counter++}`);
    const env: StoreEnv = {
      store: await PostgresStore.open({ url: PG_URL!, schema, poolSize: 4 }),
      durable: true,
      async reopen() {
        await env.store.close();
        env.store = await PostgresStore.open({ url: PG_URL!, schema, poolSize: 4 });
        return env.store;
      },
      async reset() {
        const s = pg.escapeIdentifier(schema);
        await pgTruncateAsOperator(`${s}.entries, ${s}.nonces, ${s}.sessions, ${s}.signed_checkpoints`);
      },
      async dispose() {
        await env.store.close();
        await dropSchema(schema);
      },
    };
    return env;
  },
};

/** Every store kind, in the order tests report them. */
export const STORE_KINDS: readonly StoreKind[] = [memoryKind, sqliteKind, postgresKind];
