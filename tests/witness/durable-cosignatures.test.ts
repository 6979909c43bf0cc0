/**
 * The seal records its cosignatures durably: the witnessed notary keeps every
 * cosignature it collected, and the size each witness last cosigned, in the
 * engine's store (migration 4, insert-only). A restarted engine (a new
 * notary over the same store) serves them with every witness down, submits
 * without first learning the size from a 409, and re-asking adds missing ones.
 * On the memory, SQLite and PostgreSQL stores.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { createNotary, generateEngineKey } from '../../src/receipt/index.js';
import { MemoryStore, PostgresStore, SqliteStore, type TranscriptStore } from '../../src/store/index.js';
import { cosignerKeyFrom, createWitness, createWitnessedNotary, createWitnessHttpServer, MemoryWitnessStore } from '../../src/witness/index.js';
import { runDay } from '../helpers/day.js';
import { dropSchema, freshSchemaName, PG_URL, pgExec, pgReady } from '../store/helpers/pg.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-durable-cosig-'));
const servers: Server[] = [];
const schemas: string[] = [];
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
  for (const s of schemas) await dropSchema(s);
  rmSync(dir, { recursive: true, force: true });
});

const engineKey = generateEngineKey('tally.example/desk');
const keys = ['w1.example', 'w2.example'].map((n) => cosignerKeyFrom(generateEngineKey(n)));

async function listen(s: Server): Promise<string> {
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

interface Case {
  readonly name: string;
  readonly skip?: boolean;
  open(): Promise<{ store: TranscriptStore; reopen: () => Promise<TranscriptStore>; tamper?: (sql: string) => Promise<void> }>;
}

const cases: Case[] = [
  {
    name: 'memory',
    async open() {
      const store = new MemoryStore();
      return { store, reopen: async () => store }; // no SQL to tamper with
    },
  },
  {
    name: 'SQLite',
    async open() {
      const path = join(dir, `${Math.random().toString(36).slice(2)}.db`);
      let store = new SqliteStore(path);
      return {
        store,
        reopen: async () => {
          await store.close();
          store = new SqliteStore(path);
          return store;
        },
        tamper: async (sql) => {
          const db = new Database(path);
          try {
            db.prepare(sql).run();
          } finally {
            db.close();
          }
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    skip: !pgReady,
    async open() {
      const schema = freshSchemaName('cosig');
      schemas.push(schema);
      let store = await PostgresStore.open({ url: PG_URL!, schema });
      return {
        store,
        reopen: async () => {
          await store.close();
          store = await PostgresStore.open({ url: PG_URL!, schema });
          return store;
        },
        tamper: async (sql) => {
          await pgExec(sql.replace(/\b(cosignatures|witness_sizes)\b/, `${pg.escapeIdentifier(schema)}.$1`));
        },
      };
    },
  },
];

describe.each(cases)('durable cosignatures ($name store)', (c) => {
  it.skipIf(c.skip === true)('a restarted engine serves the seal\'s cosignatures, knows each witness\'s size, and re-asking adds the missing one', async () => {
    const ws = keys.map((k) => createWitness({ key: k, store: new MemoryWitnessStore() }));
    for (const w of ws) await w.trustLogKey(engineKey.verifierKey);
    const s1 = createWitnessHttpServer(ws[0]!);
    let posts = 0;
    s1.on('request', () => posts++);
    const u1 = await listen(s1);
    const down = await listen(createWitnessHttpServer(ws[1]!));
    servers.at(-1)!.close(); // w2 is down for the first run
    servers.at(-1)!.closeAllConnections();
    const witnesses = [
      { url: u1, verifier: keys[0]!.verifier },
      { url: down, verifier: keys[1]!.verifier },
    ];
    const opened = await c.open();
    const { sid } = await runDay({ engine: createEngine({ store: opened.store }), finalize: false });
    const first = createWitnessedNotary({ notary: createNotary({ key: engineKey }), witnesses, timeoutMs: 1000 });
    const sealed = await first.sealWithReceipt(createEngine({ store: opened.store }), sid);
    if (!sealed.ok) throw new Error('seal failed');
    expect(sealed.witnesses.cosignedBy).toEqual(['w1.example']);
    const origin = sealed.checkpoint.origin;

    // Restart: a new engine and notary over the reopened store; w1 is now unreachable too.
    const store = await opened.reopen();
    const engine = createEngine({ store });
    const offline = createWitnessedNotary({ notary: createNotary({ key: engineKey }), witnesses: witnesses.map((w) => ({ ...w, url: down })), timeoutMs: 1000 });
    const served = await offline.cosign(engine, sealed.checkpoint);
    expect(served.cosignedBy).toEqual(['w1.example']);
    expect(served.signedCheckpoint).toBe(sealed.signedCheckpoint);
    expect(await (store as unknown as { witnessSize(w: string, o: string): Promise<number | undefined> }).witnessSize('w1.example', origin)).toBe(sealed.checkpoint.size);

    // Restarted with w1 up: re-asking goes straight to w1 with old = the stored size (one POST, no 409 round first).
    const restarted = createWitnessedNotary({ notary: createNotary({ key: engineKey }), witnesses, timeoutMs: 1000 });
    const before = posts;
    const again = await restarted.cosign(engine, sealed.checkpoint);
    expect(posts - before).toBe(1);
    expect(again.outcomes[0]).toMatchObject({ status: 'cosigned' });

    // w2 comes up: re-asking the same size adds its cosignature, durably.
    const s2 = createWitnessHttpServer(ws[1]!);
    servers.push(s2);
    await new Promise<void>((r) => s2.listen(Number(new URL(down).port), '127.0.0.1', () => r()));
    const both = await restarted.cosign(engine, sealed.checkpoint);
    expect(both.cosignedBy).toEqual(['w1.example', 'w2.example']);
    const later = await opened.reopen();
    const lines = await (later as unknown as { cosignatures(o: string, s: number): Promise<{ witness: string }[]> }).cosignatures(origin, sealed.checkpoint.size);
    expect(lines.map((l) => l.witness)).toEqual(['w1.example', 'w2.example']);

    // Insert-only: UPDATE and DELETE are refused by the database.
    if (opened.tamper) {
      await expect(opened.tamper("UPDATE cosignatures SET line = 'x'")).rejects.toThrow(/append-only|immutable|refuse/i);
      await expect(opened.tamper('DELETE FROM witness_sizes')).rejects.toThrow(/append-only|immutable|refuse/i);
    }
    await later.close();
  });
});
