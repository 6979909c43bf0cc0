/**
 * A client no one here wrote reads the engine log: a small Go program
 * (tests/interop/go/tlogcheck) built with Debian's golang-go and
 * golang-golang-x-mod-dev opens the log checkpoint with the published key
 * (sumdb/note), rebuilds the tree hash from the C2SP tlog-tiles through
 * tlog.TileHashReader, and proves and checks a seal leaf's inclusion
 * (tlog.ProveRecord / CheckRecord) — from `tally serve` over HTTP and from
 * `tally tiles export` files. A flipped tile byte, a wrong key or a
 * truncated bundle makes it fail. No skip: without Go this test fails
 * (.ci/run installs it).
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
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
import { authDoc } from '../server/helpers.js';
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
const check = (where: string, vkey = logKey.verifierKey, binding?: string) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((res) => {
    execFile(bin, [where, vkey, ...(binding === undefined ? [] : [binding])], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => res({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }));
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
