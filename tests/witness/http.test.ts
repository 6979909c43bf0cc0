/**
 * The C2SP tlog-witness HTTP interface, over loopback (port 0): statuses,
 * the 409 size body and content type, and the client's strict reading.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateEngineKey } from '../../src/receipt/index.js';
import { cosignerKeyFrom, createWitness, createWitnessHttpServer, MemoryWitnessStore, submitCheckpoint, addSignatureLines, verifyCosignatures } from '../../src/witness/index.js';
import { testLog } from './helpers.js';

const key = cosignerKeyFrom(generateEngineKey('witness.example/w1'));
const log = testLog();
const witness = createWitness({ key, store: new MemoryWitnessStore() });
const server = createWitnessHttpServer(witness);
let url = '';

beforeAll(async () => {
  await witness.trustLogKey(log.key.verifierKey);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function post(body: string | Buffer, path = '/add-checkpoint', method = 'POST') {
  const res = await fetch(`${url}${path}`, { method, ...(method === 'GET' ? {} : { body }) });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

describe('POST /add-checkpoint', () => {
  it('200 with cosignature lines that verify, 409 with the size as text/x.tlog.size', async () => {
    log.append(4);
    const r = await post(log.body(0));
    expect(r.status).toBe(200);
    expect(verifyCosignatures(addSignatureLines(log.checkpoint(), [r.text]), [log.key], [key.verifier])).toMatchObject({ ok: true, cosignatures: [{ name: 'witness.example/w1' }] });
    const c = await post(log.body(0));
    expect(c).toEqual({ status: 409, type: 'text/x.tlog.size', text: '4\n' });
  });

  it('400 / 403 / 404 / 422 as the spec says; 405, 404 and 413 around the route', async () => {
    expect((await post('old x\n\n')).status).toBe(400);
    expect((await post(Buffer.from([0x6f, 0x6c, 0x64, 0x20, 0xff]))).status).toBe(400);
    const other = testLog('tally.example/acme');
    other.append(2);
    expect((await post(other.body(0))).status).toBe(403);
    const stranger = testLog('stranger.example');
    stranger.append(2);
    expect((await post(stranger.body(0))).status).toBe(404);
    log.append(3);
    const bad = log.body(4).replace(/^old 4\n(.)/, (_m, ch: string) => `old 4\n${ch === 'A' ? 'B' : 'A'}`);
    expect((await post(bad)).status).toBe(422);
    expect((await post('', '/add-checkpoint', 'GET')).status).toBe(405);
    expect((await post(log.body(4), '/other')).status).toBe(404);
    expect((await post('x'.repeat(70 * 1024))).status).toBe(413);
  });
});

describe('GET /healthz', () => {
  it('answers 200 {"ok":true} and logs nothing, so a readiness probe leaves no 404 lines', async () => {
    const lines: unknown[] = [];
    const probed = createWitnessHttpServer(witness, { onRequest: (l) => lines.push(l) });
    await new Promise<void>((r) => probed.listen(0, '127.0.0.1', () => r()));
    try {
      const res = await fetch(`http://127.0.0.1:${(probed.address() as AddressInfo).port}/healthz`);
      expect([res.status, await res.text()]).toEqual([200, '{"ok":true}\n']);
      expect(lines).toEqual([]);
    } finally {
      await new Promise<void>((r) => probed.close(() => r()));
    }
  });
});

describe('submitCheckpoint', () => {
  it('reads cosigned, conflict, refused and unreachable', async () => {
    const fresh = testLog('tally.example/acme', 'cd'.repeat(32), log.key);
    fresh.append(2);
    const a = await submitCheckpoint(url, fresh.body(0));
    expect(a.kind).toBe('cosigned');
    expect(await submitCheckpoint(url, fresh.body(0))).toEqual({ kind: 'conflict', size: 2 });
    expect(await submitCheckpoint(`${url}/`, 'garbage')).toMatchObject({ kind: 'refused', status: 400 });
    const dead = createWitnessHttpServer(witness);
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', () => r()));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((r) => dead.close(() => r()));
    expect(await submitCheckpoint(`http://127.0.0.1:${port}`, fresh.body(2))).toMatchObject({ kind: 'unreachable' });
  });
});
