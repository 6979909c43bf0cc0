/**
 * A client no one here wrote reads the engine log: a small Go program
 * (tests/interop/go/tlogcheck) built with Debian's golang-go and
 * golang-golang-x-mod-dev opens the log checkpoint with the published key
 * (sumdb/note), rebuilds the tree hash from the C2SP tlog-tiles through
 * tlog.TileHashReader, and proves and checks a seal leaf's inclusion
 * (tlog.ProveRecord / CheckRecord) — from `tally serve` over HTTP and from
 * `tally tiles export` files. A flipped tile byte, a wrong key or a
 * truncated bundle makes it fail. The same program (-session) reads one
 * session's own tree as tlog-tiles (docs/PROTOCOL.md §15.4.1): the session
 * checkpoint opened with the engine key, the tree hash rebuilt and every
 * entry's inclusion checked, from `tally serve`'s /sessions/<id>/tiles (with
 * a token) and from `tally tiles export --session` files, which are the same
 * bytes; a tampered bundle fails. No skip: without Go this test fails
 * (.ci/run installs it).
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { EngineLog, logBinding } from '../../src/log/index.js';
import { createNotary, formatPrivateKey, generateEngineKey } from '../../src/receipt/index.js';
import { Authenticator, parseAuthConfig } from '../../src/server/auth.js';
import { createWireServer, type WireServer } from '../../src/server/http.js';
import { createLogger } from '../../src/server/log.js';
import { SqliteStore } from '../../src/store/index.js';
import { inProcess } from '../cli/in-process.js';
import { authDoc, TOKENS } from '../server/helpers.js';
import { runDay } from '../helpers/day.js';
import { SessionTrees } from '../../src/receipt/index.js';
import { removeTempDirs, tempDir } from '../store/helpers/tmp.js';

afterAll(removeTempDirs);

const SRC = resolve(import.meta.dirname, 'go/tlogcheck');
/** Where Debian's golang-golang-x-mod-dev puts golang.org/x/mod (GOPATH mode). */
function gopath(): string {
  const list = execFileSync('dpkg', ['-L', 'golang-golang-x-mod-dev'], { encoding: 'utf8' });
  const tlog = list.split('\n').find((l) => l.endsWith('/golang.org/x/mod/sumdb/tlog'));
  if (!tlog) throw new Error('golang-golang-x-mod-dev does not install golang.org/x/mod/sumdb/tlog');
  return tlog.slice(0, tlog.indexOf('/src/golang.org/'));
}

const engineKey = generateEngineKey('go.test/desk');
const logKey = generateEngineKey('go.test/desk/log');
let dir: string;
let bin: string;
let store: SqliteStore;
let server: WireServer;
let base: string;
let exported: string;
let lastSeal: { origin: string; size: number; root: string };

/** Runs the Go checker (asynchronously: the in-process server must answer it). */
const check = (where: string, vkey = logKey.verifierKey, binding?: string) => runGo([where, vkey, ...(binding === undefined ? [] : [binding])]);
/** The Go checker's session mode, with a bearer token for the server. */
const checkSession = (where: string, vkey = engineKey.verifierKey, token = TOKENS.auditor) => runGo(['-session', where, vkey], { TLOGCHECK_TOKEN: token });
const runGo = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((res) => {
    execFile(bin, args, { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } }, (err, stdout, stderr) => res({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }));
  });

beforeAll(async () => {
  dir = tempDir('go');
  bin = join(dir, 'tlogcheck');
  // Build with Go in GOPATH mode (no module download): fails here, loudly, when Go or x/mod is missing.
  execFileSync('go', ['build', '-o', bin, '.'], { cwd: SRC, env: { ...process.env, GO111MODULE: 'off', GOPATH: gopath(), GOCACHE: join(dir, 'gocache'), GOFLAGS: '' }, stdio: 'pipe' });
  store = new SqliteStore(join(dir, 'tally.db'));
  const engine = createEngine({ store });
  const notary = createNotary({ key: engineKey });
  // 140 sessions × 2 leaves (open, a size-1 checkpoint), then sealed days: a full tile, partial ones, and seal leaves at the end.
  for (let i = 0; i < 140; i++) {
    const o = await engine.open({ name: `go-${i}` });
    if (!o.ok) throw new Error(o.message);
    const c = await notary.issueCheckpoint(engine, o.sessionId, 1);
    if (!c.ok) throw new Error(c.message);
  }
  for (let i = 0; i < 3; i++) {
    const o = await engine.open({ name: `go-day-${i}` });
    if (!o.ok) throw new Error(o.message);
    const s = await notary.sealWithReceipt(engine, o.sessionId);
    if (!s.ok) throw new Error(s.message);
    lastSeal = { origin: s.checkpoint.origin, size: s.checkpoint.size, root: s.checkpoint.root };
  }
  const cfg = parseAuthConfig(authDoc());
  if (!cfg.ok) throw new Error(cfg.problem);
  const quiet = new Writable({ write: (_c, _e, done) => done() });
  server = createWireServer({ engine, auth: new Authenticator(cfg.config), logger: createLogger({ destination: quiet }), tiles: { prefix: '/log', log: new EngineLog({ store, key: logKey }) } });
  base = `${(await server.listen(0, '127.0.0.1')).url}/log`;
  exported = join(dir, 'tiles');
  const keyFile = join(dir, 'log.key');
  writeFileSync(keyFile, formatPrivateKey(logKey) + '\n', { mode: 0o600 });
  const r = await inProcess(['tiles', 'export', exported, '--db', join(dir, 'tally.db'), '--log-key', keyFile]);
  if (r.code !== 0) throw new Error(r.stderr);
}, 180_000);

afterAll(async () => {
  await server?.close(1000);
  await store?.close();
});

describe("Go's sumdb/tlog and sumdb/note read the engine log", () => {
  it('from tally serve: checkpoint opened with the published key, tree hash rebuilt from the tiles, a seal leaf included', async () => {
    const r = await check(base);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ok checkpoint go\.test\/desk\/log size 286 signed by go\.test\/desk\/log\nok tree hash from tiles \S+\nok seal leaf 285 included \(\d+ proof hashes\): \{"kind":"checkpoint","origin":"go\.test\/desk\/[0-9a-f]{64}","root":"[0-9a-f]{64}","seal":true,"size":\d+\}\n$/);
  });

  it('from tally tiles export files: the same', async () => {
    const r = await check(exported);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('ok seal leaf 285 included');
  });

  it('fails on a flipped tile byte, a truncated entry bundle and a key that did not sign', async () => {
    const bad = join(dir, 'tampered');
    cpSync(exported, bad, { recursive: true });
    // The partial level-0 tile holds the seal leaf's hash (tile/0/000 is not read: tile/1/000.p/1 carries its root).
    const tile = join(bad, 'tile/0/001.p/30');
    const b = readFileSync(tile);
    b.writeUInt8(b.readUInt8(100) ^ 1, 100);
    writeFileSync(tile, b);
    const flipped = await check(bad);
    expect(flipped.status).toBe(1);
    expect(flipped.stderr).toMatch(/tree hash|tile/i);

    const bad2 = join(dir, 'truncated');
    cpSync(exported, bad2, { recursive: true });
    const bundle = join(bad2, 'tile/entries/001.p/30');
    expect(existsSync(bundle)).toBe(true);
    writeFileSync(bundle, readFileSync(bundle).subarray(0, 50));
    expect((await check(bad2)).status).toBe(1);

    const other = generateEngineKey('go.test/desk/log');
    const wrongKey = await check(exported, other.verifierKey);
    expect(wrongKey.status).toBe(1);
    expect(wrongKey.stderr).toMatch(/checkpoint note/);
  });

  it("reads a day's log binding (tally export's log-proof.tlog-proof): the note opened, the seal leaf included by tlog.CheckRecord; a moved index fails", async () => {
    const text = await logBinding(new EngineLog({ store, key: logKey }), lastSeal);
    const file = join(dir, 'log-proof.tlog-proof');
    writeFileSync(file, text);
    const r = await check(exported, logKey.verifierKey, file);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`ok binding leaf 285 included in go\\.test/desk/log size 286: \\{"kind":"checkpoint","origin":"${lastSeal.origin.replace(/\./g, '\\.')}","root":"${lastSeal.root}","seal":true,"size":${lastSeal.size}\\}`));
    const moved = join(dir, 'moved.tlog-proof');
    writeFileSync(moved, text.replace('\nindex 285\n', '\nindex 284\n'));
    const bad = await check(exported, logKey.verifierKey, moved);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/binding: inclusion of leaf 284/);
  });
});

describe("Go's sumdb/tlog and sumdb/note read a session's own tree as tlog-tiles", () => {
  let sstore: SqliteStore;
  let sserver: WireServer;
  let url: string;
  let sid: string;
  let big: string;
  let unsigned: string;
  let sdir: string;
  const auth = { authorization: `Bearer ${TOKENS.auditor}` };
  const at = (id: string, rest: string) => `${url}/sessions/${id}/tiles/${rest}`;

  beforeAll(async () => {
    const db = join(dir, 'sessions.db');
    sstore = new SqliteStore(db);
    const engine = createEngine({ store: sstore });
    const trees = new SessionTrees();
    const notary = createNotary({ key: engineKey, trees });
    // 302 entries (a full level-0 tile and a partial one of 46); an earlier size signed first, so the latest is served.
    ({ sid } = await runDay({ engine, wakes: 149, name: 'go-session' }));
    for (const size of [100, 302]) {
      const c = await notary.issueCheckpoint(engine, sid, size);
      if (!c.ok) throw new Error(c.message);
    }
    // A session whose one authored turn is over 65535 bytes as an entry: no entry bundle can hold it.
    const o = await engine.open({ name: 'go-big' });
    if (!o.ok) throw new Error(o.message);
    big = o.sessionId;
    const f = await engine.frame({ sessionId: big, ordinal: -1, time: 1000 });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: big, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: new Uint8Array(70_000).fill(0x61) } });
    if (!t.ok) throw new Error(t.message);
    if (!(await notary.issueCheckpoint(engine, big)).ok) throw new Error('sign big');
    const u = await engine.open({ name: 'go-unsigned' });
    if (!u.ok) throw new Error(u.message);
    unsigned = u.sessionId;
    const cfg = parseAuthConfig(authDoc());
    if (!cfg.ok) throw new Error(cfg.problem);
    const quiet = new Writable({ write: (_c, _e, done) => done() });
    sserver = createWireServer({ engine, auth: new Authenticator(cfg.config), logger: createLogger({ destination: quiet }), notary, trees });
    url = (await sserver.listen(0, '127.0.0.1')).url;
    const keyFile = join(dir, 'engine.key');
    writeFileSync(keyFile, formatPrivateKey(engineKey) + '\n', { mode: 0o600 });
    sdir = join(dir, 'session-tiles');
    const r = await inProcess(['tiles', 'export', sdir, '--session', sid, '--db', db, '--key', keyFile, '--json']);
    if (r.code !== 0) throw new Error(r.stderr);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, origin: `go.test/desk/${sid}`, size: 302, files: 6, verifierKey: engineKey.verifierKey });
    const tooBig = await inProcess(['tiles', 'export', join(dir, 'big-tiles'), '--session', big, '--db', db, '--key', keyFile]);
    expect(tooBig.code).toBe(1);
    expect(tooBig.stderr).toMatch(/TALLY_TILES_ENTRY_TOO_LARGE|65535/);
    expect(existsSync(join(dir, 'big-tiles', 'checkpoint'))).toBe(false);
  }, 180_000);

  afterAll(async () => {
    await sserver?.close(1000);
    await sstore?.close();
  });

  it('from tally serve (with a token): the session checkpoint opened with the engine key, the tree hash rebuilt, every entry included', async () => {
    const r = await checkSession(`${url}/sessions/${sid}/tiles`);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^ok session checkpoint go\\.test/desk/${sid} size 302 signed by go\\.test/desk\nok tree hash from tiles \\S+\nok 302 entries included; entry 301: \\{"artifacts":`));
  });

  it('from tally tiles export --session files: the same, and every exported file is the byte-for-byte answer of the server', async () => {
    const r = await checkSession(sdir);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const files = (readdirSync(sdir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[]).filter((d) => d.isFile()).map((d) => relative(sdir, join(d.parentPath, d.name))).sort();
    expect(files).toEqual(['checkpoint', 'tile/0/000', 'tile/0/001.p/46', 'tile/1/000.p/1', 'tile/entries/000', 'tile/entries/001.p/46']);
    for (const f of files) {
      const res = await fetch(at(sid, f), { headers: auth });
      expect(res.status, f).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(join(sdir, f))), f).toBe(true);
    }
  });

  it('fails on a tampered exported entry bundle, and on a key that did not sign', async () => {
    const bad = join(dir, 'session-tampered');
    cpSync(sdir, bad, { recursive: true });
    const bundle = join(bad, 'tile/entries/001.p/46');
    const b = readFileSync(bundle);
    b.writeUInt8(b.readUInt8(b.length - 3) ^ 1, b.length - 3); // inside the last entry (the seal)
    writeFileSync(bundle, b);
    const r = await checkSession(bad);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/inclusion of entry 301/);
    const other = await checkSession(sdir, generateEngineKey('go.test/desk').verifierKey);
    expect(other.status).toBe(1);
    expect(other.stderr).toMatch(/checkpoint note/);
  });

  it('HTTP: the spec headers, private caching, and 401/403/404/405 at every edge', async () => {
    const cp = await fetch(at(sid, 'checkpoint'), { headers: auth });
    expect([cp.status, cp.headers.get('content-type'), cp.headers.get('cache-control')]).toEqual([200, 'text/plain; charset=utf-8', 'private, max-age=2']);
    expect(await cp.text()).toMatch(new RegExp(`^go\\.test/desk/${sid}\n302\n`));
    const full = await fetch(at(sid, 'tile/0/000'), { headers: auth });
    expect([full.status, full.headers.get('content-type'), full.headers.get('cache-control'), (await full.arrayBuffer()).byteLength]).toEqual([200, 'application/octet-stream', 'private, max-age=31536000, immutable', 8192]);
    const part = await fetch(at(sid, 'tile/0/001.p/46'), { headers: auth });
    expect([part.status, part.headers.get('cache-control')]).toEqual([200, 'private, max-age=60']);
    // A partial tile of an earlier size is the same bytes as the full tile's first hashes.
    const earlier = await fetch(at(sid, 'tile/0/000.p/100'), { headers: auth });
    expect(Buffer.from(await earlier.arrayBuffer()).equals(readFileSync(join(sdir, 'tile/0/000')).subarray(0, 3200))).toBe(true);
    const status = async (u: string, init: RequestInit = { headers: auth }) => (await fetch(u, init)).status;
    expect(await status(at(sid, 'checkpoint'), {})).toBe(401);
    expect(await status(at(sid, 'checkpoint'), { headers: { authorization: `Bearer ${TOKENS.alpha}` } })).toBe(403);
    expect(await status(at(sid, 'tile/0/000'), { method: 'POST', headers: auth })).toBe(405);
    expect(await status(at(sid, 'tile/0/000'), { method: 'HEAD', headers: auth })).toBe(200);
    for (const p of ['tile/0/x000/000', 'tile/0/00', 'tile/00/000', 'tile/0/0', 'tile/0/001.p/0', 'tile/0/000.p/256', 'tile/0/001.p/47', 'tile/0/002', 'tile/entries/001', 'tile/1/000', 'tile/8/0/000', 'tile/0/000/', 'tiles', 'tile/']) {
      expect(await status(at(sid, p)), p).toBe(404);
    }
    expect(await status(at('ab'.repeat(32), 'checkpoint'))).toBe(404);
    expect(await status(at('AB'.repeat(32), 'checkpoint'))).toBe(404);
    expect(await status(at(unsigned, 'checkpoint'))).toBe(404);
    expect(await status(at(unsigned, 'tile/0/000.p/1'))).toBe(404);
    // The big session: its hash tile exists, its entry bundle cannot.
    expect(await status(at(big, 'tile/0/000.p/3'))).toBe(200);
    const nb = await fetch(at(big, 'tile/entries/000.p/3'), { headers: auth });
    expect(nb.status).toBe(404);
    expect(await nb.text()).toMatch(/65535/);
  });
});
