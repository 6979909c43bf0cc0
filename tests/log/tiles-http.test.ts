/**
 * The engine log's C2SP tlog-tiles read API, as `tally serve` answers it
 * (real HTTP on loopback) and as `tally tiles export` writes it: paths,
 * encodings and caching headers per the spec, full tiles immutable, every
 * other spelling 404; the tiles rebuild the checkpoint's root, and the
 * exported files are the served bytes.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { EngineLog, formatPrivateKeyLine } from './key-file.js';
import { entryHash, parseCheckpointText, parseEntryBundle, rfc6962Hasher, rootFromLeafHashes, toHex } from './tiles-helpers.js';
import { createNotary, generateEngineKey, openNote } from '../../src/receipt/index.js';
import { Authenticator, parseAuthConfig } from '../../src/server/auth.js';
import { createWireServer, type WireServer } from '../../src/server/http.js';
import { createLogger } from '../../src/server/log.js';
import { SqliteStore } from '../../src/store/index.js';
import { authDoc } from '../server/helpers.js';
import { inProcess } from '../cli/in-process.js';
import { removeTempDirs, tempDir } from '../store/helpers/tmp.js';
import { Writable } from 'node:stream';

afterAll(removeTempDirs);

const engineKey = generateEngineKey('tiles.test/desk');
const logKey = generateEngineKey('tiles.test/desk/log');
const hasher = rfc6962Hasher(sha256);
const SESSIONS = 150; // 2 leaves each (open, a checkpoint of size 1): 300 leaves = one full level-0 tile and a partial of 44

let dir: string;
let dbPath: string;
let store: SqliteStore;
let server: WireServer;
let base: string;

beforeAll(async () => {
  dir = tempDir('tiles');
  dbPath = join(dir, 'tally.db');
  store = new SqliteStore(dbPath);
  const engine = createEngine({ store });
  const notary = createNotary({ key: engineKey });
  for (let i = 0; i < SESSIONS; i++) {
    const o = await engine.open({ name: `tiles-${i}` });
    if (!o.ok) throw new Error(o.message);
    const c = await notary.issueCheckpoint(engine, o.sessionId, 1);
    if (!c.ok) throw new Error(c.message);
  }
  const cfg = parseAuthConfig(authDoc());
  if (!cfg.ok) throw new Error(cfg.problem);
  const quiet = new Writable({ write: (_c, _e, done) => done() });
  server = createWireServer({ engine, auth: new Authenticator(cfg.config), logger: createLogger({ destination: quiet }), tiles: { prefix: '/log', log: new EngineLog({ store, key: logKey }) } });
  base = (await server.listen(0, '127.0.0.1')).url;
}, 60_000);

afterAll(async () => {
  await server?.close(1000);
  await store?.close();
});

const get = (path: string, init?: RequestInit) => fetch(`${base}${path}`, init);
const bytes = async (r: Response) => new Uint8Array(await r.arrayBuffer());

describe('tally serve: the engine log as C2SP tlog-tiles', () => {
  it('GET <prefix>/checkpoint: text/plain; charset=utf-8, cached a few seconds at most, signed by the log key, no token', async () => {
    const r = await get('/log/checkpoint');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(r.headers.get('cache-control')).toBe('public, max-age=2');
    const opened = openNote(await r.text(), [logKey.verifierKey]);
    if (!opened.ok) throw new Error(opened.message);
    const cp = parseCheckpointText(opened.text);
    expect(cp.origin).toBe('tiles.test/desk/log');
    expect(cp.size).toBe(2 * SESSIONS);
  });

  it('tiles and entry bundles: octet-stream, full ones immutable, and they rebuild the checkpoint root', async () => {
    const cp = parseCheckpointText((await (await get('/log/checkpoint')).text()).split('\n\n')[0]! + '\n');
    const full = await get('/log/tile/0/000');
    expect(full.status).toBe(200);
    expect(full.headers.get('content-type')).toBe('application/octet-stream');
    expect(full.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const t0 = await bytes(full);
    expect(t0.length).toBe(8192);
    const partial = await get('/log/tile/0/001.p/44');
    expect(partial.status).toBe(200);
    expect(partial.headers.get('cache-control')).toBe('public, max-age=60');
    const t1 = await bytes(partial);
    expect(t1.length).toBe(44 * 32);
    const e0 = parseEntryBundle(await bytes(await get('/log/tile/entries/000')))!;
    const e1 = parseEntryBundle(await bytes(await get('/log/tile/entries/001.p/44')))!;
    expect(e0).toHaveLength(256);
    expect(e1).toHaveLength(44);
    const leaves = [...e0, ...e1];
    // Each entry hashes to its level-0 tile hash; the leaf hashes rebuild the signed root.
    const hashes = leaves.map((l) => entryHash(sha256, l));
    const fromTiles = [...Array.from({ length: 256 }, (_, i) => t0.subarray(i * 32, i * 32 + 32)), ...Array.from({ length: 44 }, (_, i) => t1.subarray(i * 32, i * 32 + 32))];
    expect(fromTiles.map(toHex)).toEqual(hashes.map(toHex));
    expect(toHex(rootFromLeafHashes(hasher, hashes))).toBe(toHex(cp.root));
    // The level-1 partial tile (width 1) is the MTH of the full level-0 tile.
    const l1 = await bytes(await get('/log/tile/1/000.p/1'));
    expect(toHex(l1)).toBe(toHex(rootFromLeafHashes(hasher, hashes.slice(0, 256))));
    // The entries are the store's leaves, byte for byte.
    expect(leaves).toEqual(await store.engineLogLeaves(0, 300));
    // HEAD answers the headers without the body.
    const head = await get('/log/tile/0/000', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('8192');
  });

  it('any other spelling, a tile beyond the checkpoint, or an empty tile is 404; other methods 405', async () => {
    for (const p of ['/log/tile/0/0', '/log/tile/00/000', '/log/tile/0/001', '/log/tile/0/001.p/45', '/log/tile/0/001.p/43x', '/log/tile/1/000', '/log/tile/2/000.p/1', '/log/tile/0/x000/000', '/log/tile/entries/001', '/log/tile/entries/002.p/1', '/log/tile/0/000.p/256', '/log/tile/']) {
      const r = await get(p);
      expect(r.status, p).toBe(404);
    }
    // Smaller partial tiles of earlier sizes are the same bytes (prefixes), and stay available.
    const small = await bytes(await get('/log/tile/0/001.p/3'));
    expect(small).toEqual((await bytes(await get('/log/tile/0/001.p/44'))).subarray(0, 96));
    expect((await get('/log/checkpoint', { method: 'POST' })).status).toBe(405);
    // Everything else still needs a token.
    expect((await get('/verifier-key')).status).toBe(401);
  });

  it('tally tiles export writes exactly the served files', async () => {
    const out = join(dir, 'export');
    const keyFile = join(dir, 'log.key');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(keyFile, formatPrivateKeyLine(logKey) + '\n', { mode: 0o600 });
    const r = await inProcess(['tiles', 'export', out, '--db', dbPath, '--log-key', keyFile]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`engine log tiles.test/desk/log: size ${2 * SESSIONS}`);
    const files = walk(out).map((f) => relative(out, f)).sort();
    expect(files).toEqual(['checkpoint', 'tile/0/000', 'tile/0/001.p/44', 'tile/1/000.p/1', 'tile/entries/000', 'tile/entries/001.p/44'].sort());
    for (const f of files) expect(new Uint8Array(readFileSync(join(out, f))), f).toEqual(await bytes(await get(`/log/${f}`)));
    // A key under another name than the origin is refused.
    const bad = await inProcess(['tiles', 'export', out, '--db', dbPath, '--log-key', keyFile, '--log-origin', 'tiles.test/other']);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/log key/);
    // A missing key file makes a new key: on a store whose log another key signs, it is refused, and signs nothing.
    const fresh = join(dir, 'new-log.key');
    const other = await inProcess(['tiles', 'export', join(dir, 'export-other'), '--db', dbPath, '--log-key', fresh, '--json']);
    expect(other.code).toBe(1);
    expect(JSON.parse(other.stdout)).toMatchObject({ ok: false, code: 'TALLY_LOG_KEY_MISMATCH' });
    expect(other.stdout).toContain(logKey.verifierKey);
    expect(walk(dir).some((f) => f.includes('export-other'))).toBe(false);
  });
});

describe('tally tiles export --session: the engine key, one session; the usage edges', () => {
  it('writes a one-entry session; refuses a bad or unknown id, the log key options, and --key without --session; a server without an engine key serves no session tiles', async () => {
    const { writeFileSync } = await import('node:fs');
    const keyFile = join(dir, 'engine.key');
    writeFileSync(keyFile, formatPrivateKeyLine(engineKey) + '\n', { mode: 0o600 });
    const sid = (await store.listSessions())[0]!;
    const out = join(dir, 'session-export');
    const r = await inProcess(['tiles', 'export', out, '--session', sid, '--db', dbPath, '--key', keyFile]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain(`session tiles.test/desk/${sid}: size 1`);
    expect(walk(out).map((f) => relative(out, f)).sort()).toEqual(['checkpoint', 'tile/0/000.p/1', 'tile/entries/000.p/1']);
    // The one entry is the genesis, whose entry hash is the session id: the bundle holds exactly the bytes that hash.
    const entries = parseEntryBundle(new Uint8Array(readFileSync(join(out, 'tile/entries/000.p/1'))))!;
    expect(entries.map((e) => toHex(entryHash(sha256, e)))).toEqual([sid]);
    const usage = async (...args: string[]) => (await inProcess(['tiles', 'export', join(dir, 'x'), '--db', dbPath, ...args])).code;
    expect(await usage('--session', 'AB'.repeat(32), '--key', keyFile)).toBe(2);
    expect(await usage('--session', sid, '--key', keyFile, '--log-key', keyFile)).toBe(2);
    expect(await usage('--key', keyFile)).toBe(2);
    const unknown = await inProcess(['tiles', 'export', join(dir, 'x'), '--db', dbPath, '--session', 'ab'.repeat(32), '--key', keyFile]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no session/);
    const { TOKENS } = await import('../server/helpers.js');
    const served = await get(`/sessions/${sid}/tiles/checkpoint`, { headers: { authorization: `Bearer ${TOKENS.auditor}` } });
    expect(served.status).toBe(404);
    expect(await served.text()).toMatch(/signs no checkpoints/);
  });
});

function walk(d: string): string[] {
  return readdirSync(d).flatMap((n) => {
    const p = join(d, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

describe('tally tiles export: the partial tiles of every size the log signed', () => {
  it('writes the partial tiles of an earlier signed size beside the latest, each the bytes the log answers for that tile', async () => {
    const d = tempDir('tiles-earlier');
    const db = join(d, 'tally.db');
    const s = new SqliteStore(db);
    try {
      const engine = createEngine({ store: s });
      const notary = createNotary({ key: engineKey });
      const log = new EngineLog({ store: s, key: logKey, minIntervalMs: 0 });
      const day = async (i: number) => {
        const o = await engine.open({ name: `earlier-${i}` });
        if (!o.ok) throw new Error(o.message);
        const c = await notary.issueCheckpoint(engine, o.sessionId, 1);
        if (!c.ok) throw new Error(c.message);
      };
      for (let i = 0; i < 3; i++) await day(i);
      expect((await log.checkpoint()).size).toBe(6);
      for (let i = 3; i < 5; i++) await day(i);
      const keyFile = join(d, 'log.key');
      const { writeFileSync } = await import('node:fs');
      writeFileSync(keyFile, formatPrivateKeyLine(logKey) + '\n', { mode: 0o600 });
      const out = join(d, 'export');
      const r = await inProcess(['tiles', 'export', out, '--db', db, '--log-key', keyFile]);
      expect(r.code, r.stderr).toBe(0);
      const files = walk(out).map((f) => relative(out, f)).sort();
      // Size 10 now, and size 6 was signed: tlog-tiles has a log serve the partial tiles of both.
      expect(files).toEqual(['checkpoint', 'tile/0/000.p/10', 'tile/0/000.p/6', 'tile/entries/000.p/10', 'tile/entries/000.p/6'].sort());
      const { readTile } = await import('../../src/log/tiles.js');
      for (const f of files.filter((x) => x !== 'checkpoint')) {
        const served = await readTile(log, f);
        expect(served, f).toBeDefined();
        expect(new Uint8Array(readFileSync(join(out, f))), f).toEqual(served!.body);
      }
      // The size-6 bundle holds exactly the first six leaves.
      expect(parseEntryBundle(new Uint8Array(readFileSync(join(out, 'tile/entries/000.p/6'))))?.length).toBe(6);
    } finally {
      await s.close();
    }
  });
});
