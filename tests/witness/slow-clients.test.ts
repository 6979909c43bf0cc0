/**
 * `tally witness serve` under slow clients and with separate PostgreSQL
 * schemas (issue #34): the same header and request timeouts as `tally serve`
 * (src/http's one copy), in process and through the built CLI's
 * `--headers-timeout`; many stalled connections are all cut, none held; and
 * `--db 'postgres://…?schema=w1'` keeps the witness's state (its trusted log
 * keys) in that schema, as the engine's store reads it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateEngineKey } from '../../src/receipt/index.js';
import { cosignerKeyFrom, createWitness, createWitnessHttpServer, MemoryWitnessStore, openWitnessStore, submitCheckpoint } from '../../src/witness/index.js';
import { TALLY, tally } from '../cli/helpers.js';
import { stall, portOf } from '../helpers/stall.js';
import { freshSchemaName, PG_URL, pgExec, pgReady, warnIfSkipped } from '../store/helpers/pg.js';
import { testLog } from './helpers.js';
import { startListening } from './serve.js';

const headersTimeoutMs = 600;
const requestTimeoutMs = 1_200;
const dir = mkdtempSync(join(tmpdir(), 'tally-witness-slow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('witness HTTP: slow clients', () => {
  const witness = createWitness({ key: cosignerKeyFrom(generateEngineKey('witness.example/slow')), store: new MemoryWitnessStore() });
  const server = createWitnessHttpServer(witness, { timeouts: { headersTimeoutMs, requestTimeoutMs } });
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('headers that never finish are cut after the headers timeout, well before twice it', async () => {
    const { order, got } = await stall(port, 'POST /add-checkpoint HTTP/1.1\r\nHost: x\r\n', headersTimeoutMs);
    expect(order).toEqual(['setting', 'closed']);
    expect(got).toMatch(/^HTTP\/1\.1 408/);
  });

  it('a body that never finishes is cut after the request timeout, well before twice it', async () => {
    const { order, got } = await stall(port, 'POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nold 0\n', requestTimeoutMs);
    expect(order).toEqual(['setting', 'closed']);
    expect(got).toMatch(/^HTTP\/1\.1 408/);
  });

  it('100 stalled connections are all cut, none held past twice the setting', async () => {
    const all = await Promise.all(Array.from({ length: 100 }, (_, i) => stall(port, i % 2 === 0 ? 'POST /add-checkpoint HTTP/1.1\r\n' : 'POST /add-chec', headersTimeoutMs)));
    expect(all.filter((r) => r.order.includes('twice'))).toEqual([]);
    expect(all.every((r) => /^HTTP\/1\.1 408/.test(r.got))).toBe(true);
  });
});

describe('the built CLI: --headers-timeout on every server', () => {
  it('tally witness serve', async () => {
    const key = join(dir, 'w.key');
    expect(tally(['witness', 'keygen', '--name', 'witness.example/cli', '--key', key]).code).toBe(0);
    const w = await startListening([TALLY, 'witness', 'serve', '--key', key, '--db', 'memory:', '--port', '0', '--headers-timeout', String(headersTimeoutMs)]);
    try {
      const { order, got } = await stall(portOf(w.url), 'POST /add-checkpoint HTTP/1.1\r\n', headersTimeoutMs);
      expect(order).toEqual(['setting', 'closed']);
      expect(got).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      w.child.kill('SIGTERM');
      expect(await w.exited).toEqual({ code: 0, signal: null });
    }
    expect(tally(['witness', 'serve', '--key', key, '--db', 'memory:', '--headers-timeout', '5']).code).toBe(2);
  });
});

warnIfSkipped('tests/witness/slow-clients.test.ts');

describe.skipIf(!pgReady)('tally witness --db postgres://…?schema= (PostgreSQL)', () => {
  const a = freshSchemaName('wa');
  const b = freshSchemaName('wb');
  const at = (schema: string): string => {
    const u = new URL(PG_URL!);
    u.searchParams.set('schema', schema);
    return u.toString();
  };
  afterAll(async () => {
    for (const s of [a, b]) await pgExec(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  });

  it('openWitnessStore reads ?schema= (and it wins over the option, as for the engine store)', async () => {
    const s = await openWitnessStore(at(a), { schema: b });
    try {
      expect(s.name).toMatch(new RegExp(`#${a}$`));
      expect(s.name).not.toContain('?schema');
    } finally {
      await s.close();
    }
  });

  it('a log trusted in schema A is not trusted by a witness on schema B', async () => {
    const key = join(dir, 'pg.key');
    expect(tally(['witness', 'keygen', '--name', 'witness.example/pg', '--key', key]).code).toBe(0);
    const log = testLog('tally.example/schemas', 'cd'.repeat(32), generateEngineKey('tally.example/schemas'));
    log.append(3);
    expect(tally(['witness', 'trust', log.key.verifierKey, '--db', at(a)]).code).toBe(0);
    const tables = await pgExec('SELECT table_schema FROM information_schema.tables WHERE table_schema = ANY($1)', [[a, b]]);
    expect(new Set(tables.rows.map((r: { table_schema: string }) => r.table_schema))).toEqual(new Set([a]));
    for (const [schema, expected] of [
      [b, 'refused'],
      [a, 'cosigned'],
    ] as const) {
      const w = await startListening([TALLY, 'witness', 'serve', '--key', key, '--db', at(schema), '--port', '0']);
      try {
        expect((await submitCheckpoint(w.url, log.body(0))).kind).toBe(expected);
      } finally {
        w.child.kill('SIGTERM');
        await w.exited;
      }
    }
  });
});
