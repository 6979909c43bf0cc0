import { generateKeyPairSync } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadEngineKeyFile, loadOrCreateEngineKey, formatPrivateKey, generateEngineKey } from '../../src/receipt/keys/index.js';
import { openNote, signNote } from '../../src/receipt/note/index.js';
import { TallyError } from '../../src/protocol/errors.js';

const posix = process.platform !== 'win32';
let root = '';
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tally-keys-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'no-throw';
  } catch (e) {
    if (e instanceof TallyError) return e.code;
    throw e;
  }
}

describe('loadOrCreateEngineKey', () => {
  test.runIf(posix)('first use creates the directory 0700 and the file 0600; later uses load the same key', async () => {
    const dir = join(root, 'fresh', 'nested');
    const path = join(dir, 'engine.key');
    const created = await loadOrCreateEngineKey(path, 'tally.example/acme');
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readFile(path, 'utf8')).toBe(`${formatPrivateKey(created)}\n`);
    const loaded = await loadOrCreateEngineKey(path, 'tally.example/acme');
    expect(loaded.verifierKey).toBe(created.verifierKey);
    expect(openNote(signNote('x\n', [loaded]), [created.verifierKey]).ok).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(['engine.key']);
  });

  test.runIf(posix)('an existing directory keeps its mode', async () => {
    const dir = join(root, 'existing');
    await mkdir(dir, { mode: 0o755 });
    await chmod(dir, 0o755);
    await loadOrCreateEngineKey(join(dir, 'engine.key'), 'n');
    expect((await stat(dir)).mode & 0o777).toBe(0o755);
  });

  test('eight concurrent first uses agree on one key and leave no temp files', async () => {
    const dir = join(root, 'race');
    const path = join(dir, 'engine.key');
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateEngineKey(path, 'tally.example/race')));
    expect(new Set(keys.map((k) => k.verifierKey)).size).toBe(1);
    expect(await readdir(dir)).toEqual(['engine.key']);
  });

  test('a stored key under another name is refused', async () => {
    const path = join(root, 'named', 'engine.key');
    await loadOrCreateEngineKey(path, 'tally.example/one');
    expect(await codeOf(loadOrCreateEngineKey(path, 'tally.example/two'))).toBe('TALLY_KEY_NAME_MISMATCH');
  });

  test('an invalid name is refused before touching the disk', async () => {
    const path = join(root, 'badname', 'engine.key');
    expect(await codeOf(loadOrCreateEngineKey(path, 'bad name'))).toBe('TALLY_NOTE_KEY_NAME_INVALID');
    await expect(stat(join(root, 'badname'))).rejects.toThrow(/ENOENT/);
  });
});

describe('loadEngineKeyFile — permissions', () => {
  async function keyFileWithMode(mode: number): Promise<string> {
    const path = join(root, `mode-${mode.toString(8)}.key`);
    await writeFile(path, `${formatPrivateKey(generateEngineKey('n'))}\n`, { mode: 0o600 });
    await chmod(path, mode);
    return path;
  }

  test.runIf(posix).each([0o644, 0o640, 0o604, 0o660, 0o606, 0o610, 0o601, 0o666])('mode %o (group/others bits) is refused with TALLY_KEY_FILE_PERMISSIONS', async (mode) => {
    const path = await keyFileWithMode(mode);
    expect(await codeOf(loadEngineKeyFile(path, 'n'))).toBe('TALLY_KEY_FILE_PERMISSIONS');
    expect(await codeOf(loadOrCreateEngineKey(path, 'n'))).toBe('TALLY_KEY_FILE_PERMISSIONS');
  });

  test.runIf(posix)('the refusal says what to do', async () => {
    const path = await keyFileWithMode(0o644);
    await expect(loadEngineKeyFile(path, 'n')).rejects.toThrow(`has mode 0644; run: chmod 600 ${path}`);
  });

  test.runIf(posix).each([0o600, 0o400])('mode %o is accepted', async (mode) => {
    const path = await keyFileWithMode(mode);
    expect((await loadEngineKeyFile(path, 'n')).name).toBe('n');
  });

  test('missing file, a directory, and garbage each have their own code', async () => {
    expect(await codeOf(loadEngineKeyFile(join(root, 'nope.key')))).toBe('TALLY_KEY_FILE_NOT_FOUND');
    const d = join(root, 'adir');
    await mkdir(d, { mode: 0o700 });
    expect(await codeOf(loadEngineKeyFile(d))).toBe('TALLY_KEY_FILE_INVALID');
    const g = join(root, 'garbage.key');
    await writeFile(g, 'not a key\n', { mode: 0o600 });
    expect(await codeOf(loadEngineKeyFile(g))).toBe('TALLY_KEY_MALFORMED');
  });

  test('a PEM key file loads under the given name', async () => {
    const path = join(root, 'pem.key');
    const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    await writeFile(path, pem, { mode: 0o600 });
    const key = await loadEngineKeyFile(path, 'tally.example/pem');
    expect(openNote(signNote('p\n', [key]), [key.verifierKey]).ok).toBe(true);
    expect(await codeOf(loadEngineKeyFile(path))).toBe('TALLY_KEY_NAME_REQUIRED');
  });
});
