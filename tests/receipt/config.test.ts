import { mkdtempSync, statSync, writeFileSync, chmodSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ENGINE_NAME,
  DEFAULT_KEY_PATH,
  engineKeyPath,
  formatPrivateKey,
  generateEngineKey,
  loadEngineKey,
  resolveVerifierKeys,
} from '../../src/receipt/index.js';

const fresh = () => mkdtempSync(join(tmpdir(), 'tally-key-'));

describe('engine key configuration', () => {
  it('defaults: .tally/engine.key named tally.local, created on first use with owner-only permissions', async () => {
    const cwd = fresh();
    const key = await loadEngineKey({ cwd, env: {} });
    expect(key.name).toBe(DEFAULT_ENGINE_NAME);
    const path = join(cwd, DEFAULT_KEY_PATH);
    if (process.platform !== 'win32') {
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(statSync(join(cwd, '.tally')).mode & 0o777).toBe(0o700);
    }
    const again = await loadEngineKey({ cwd, env: {} });
    expect(again.verifierKey).toBe(key.verifierKey);
  });

  it('TALLY_KEY and TALLY_ENGINE_NAME are honoured; an existing key keeps its own name when none is configured', async () => {
    const cwd = fresh();
    const env = { TALLY_KEY: 'keys/desk.key', TALLY_ENGINE_NAME: 'tally.example/desk' };
    expect(engineKeyPath(env)).toBe('keys/desk.key');
    const key = await loadEngineKey({ cwd, env });
    expect(key.name).toBe('tally.example/desk');
    expect((await loadEngineKey({ cwd, env: { TALLY_KEY: 'keys/desk.key' } })).verifierKey).toBe(key.verifierKey);
    await expect(loadEngineKey({ cwd, env: { ...env, TALLY_ENGINE_NAME: 'tally.example/other' } })).rejects.toMatchObject({ code: 'TALLY_KEY_NAME_MISMATCH' });
  });

  it('an operator-supplied key (PRIVATE+KEY line or PKCS#8 PEM) is used as is; a group-readable one is refused', async () => {
    const cwd = fresh();
    const supplied = generateEngineKey('ops.example');
    writeFileSync(join(cwd, 'ops.key'), `${formatPrivateKey(supplied)}\n`, { mode: 0o600 });
    expect((await loadEngineKey({ cwd, path: 'ops.key', env: {} })).verifierKey).toBe(supplied.verifierKey);
    const pem = supplied.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    writeFileSync(join(cwd, 'ops.pem'), pem, { mode: 0o600 });
    const fromPem = await loadEngineKey({ cwd, path: 'ops.pem', env: {} });
    expect([fromPem.name, fromPem.publicKey]).toEqual([DEFAULT_ENGINE_NAME, supplied.publicKey]);
    if (process.platform !== 'win32') {
      chmodSync(join(cwd, 'ops.key'), 0o640);
      await expect(loadEngineKey({ cwd, path: 'ops.key', env: {} })).rejects.toMatchObject({ code: 'TALLY_KEY_FILE_PERMISSIONS' });
    }
    await expect(loadEngineKey({ cwd, path: 'missing.key', env: {}, create: false })).rejects.toMatchObject({ code: 'TALLY_KEY_FILE_NOT_FOUND' });
  });
});

describe('resolveVerifierKeys', () => {
  const k = generateEngineKey('tally.example/desk');
  const w = generateEngineKey('witness.example');

  it('takes a verifier key string, or a file of them (comments and blank lines ignored)', async () => {
    const cwd = fresh();
    expect((await resolveVerifierKeys(k.verifierKey, cwd)).map((v) => v.verifierKey)).toEqual([k.verifierKey]);
    writeFileSync(join(cwd, 'keys.txt'), `# engine\n${k.verifierKey}\n\n${w.verifierKey}\n`);
    expect((await resolveVerifierKeys('keys.txt', cwd)).map((v) => v.name)).toEqual(['tally.example/desk', 'witness.example']);
  });

  it('refuses a private key without echoing it, a bad key, an empty file and a missing file', async () => {
    const cwd = fresh();
    const secret = formatPrivateKey(k);
    const err = await resolveVerifierKeys(secret, cwd).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'TALLY_VERIFIER_KEY_INVALID' });
    expect(String((err as Error).message)).not.toContain(secret.split('+')[4]!);
    writeFileSync(join(cwd, 'leak.txt'), `${secret}\n`);
    await expect(resolveVerifierKeys('leak.txt', cwd)).rejects.toMatchObject({ code: 'TALLY_VERIFIER_KEY_INVALID' });
    expect(readFileSync(join(cwd, 'leak.txt'), 'utf8')).toContain('PRIVATE');
    const tampered = k.verifierKey.replace(/\+([0-9a-f]{8})\+/, (_m, id: string) => `+${id === '00000000' ? '00000001' : '00000000'}+`);
    await expect(resolveVerifierKeys(tampered, cwd)).rejects.toMatchObject({ code: 'TALLY_VERIFIER_KEY_INVALID' });
    writeFileSync(join(cwd, 'empty.txt'), '# nothing\n');
    await expect(resolveVerifierKeys('empty.txt', cwd)).rejects.toMatchObject({ code: 'TALLY_VERIFIER_KEY_INVALID' });
    await expect(resolveVerifierKeys('nope.txt', cwd)).rejects.toMatchObject({ code: 'TALLY_VERIFIER_KEY_IO' });
  });
});
