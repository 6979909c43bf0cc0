import { randomBytes } from 'node:crypto';
import { link, mkdir, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { generateEngineKey, assertKeyName, type EngineKey } from './engineKey.js';
import { formatPrivateKey, parsePrivateKey } from './privateKey.js';
import { TallyError } from '../../protocol/errors.js';

/** Mode of a key file Tally writes. */
export const KEY_FILE_MODE = 0o600;
/** Mode of a key directory Tally creates. */
export const KEY_DIR_MODE = 0o700;
/** Largest key file Tally reads. */
const MAX_KEY_FILE_BYTES = 64 * 1024;

function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
}

/**
 * Loads the engine key stored at `path` (a `PRIVATE+KEY+…` line or a PKCS#8 PEM).
 * Refuses — `TALLY_KEY_FILE_PERMISSIONS` — a file that group or others may
 * read, write or execute (any of mode bits 0o077; POSIX only), checked on the
 * opened handle so the check and the read see the same file.
 * Other errors: `TALLY_KEY_FILE_NOT_FOUND`, `TALLY_KEY_FILE_IO`,
 * `TALLY_KEY_FILE_INVALID` (not a regular file, too large), and those of `parsePrivateKey`.
 *
 * @example
 * const key = await loadEngineKeyFile('/var/lib/tally/engine.key', 'tally.example/acme');
 */
export async function loadEngineKeyFile(path: string, name?: string): Promise<EngineKey> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') throw new TallyError('TALLY_KEY_FILE_NOT_FOUND', 'Engine key file does not exist.', { details: path, cause });
    throw new TallyError('TALLY_KEY_FILE_IO', 'Cannot open the engine key file.', { details: path, cause });
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new TallyError('TALLY_KEY_FILE_INVALID', 'Engine key path is not a regular file.', { details: path });
    if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
      const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
      throw new TallyError('TALLY_KEY_FILE_PERMISSIONS', 'Engine key file is accessible by group or others; refusing to use it.', {
        details: `${path} has mode ${mode}; run: chmod 600 ${path}`,
      });
    }
    if (st.size > MAX_KEY_FILE_BYTES) throw new TallyError('TALLY_KEY_FILE_INVALID', 'Engine key file is too large.', { details: path });
    const text = await handle.readFile({ encoding: 'utf8' });
    return parsePrivateKey(text, name);
  } finally {
    await handle.close();
  }
}

async function syncDir(dir: string): Promise<void> {
  try {
    const d = await open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    // Directory fsync is not supported everywhere (e.g. Windows); the rename is still atomic.
  }
}

/**
 * Loads the engine key at `path`, or — on first use — generates one and stores
 * it there as a `PRIVATE+KEY+…` line: the directory is created with mode 0700
 * (existing directories are left as they are), the key is written to a temp
 * file with mode 0600 in the same directory, fsynced, and then published
 * atomically under `path` with `link` (which never overwrites, so two engines
 * starting at once end up with the same key; `rename` is the fallback on file
 * systems without hard links). An existing file is loaded with the checks of
 * `loadEngineKeyFile`, including the name check.
 *
 * @example
 * const key = await loadOrCreateEngineKey('/var/lib/tally/engine.key', 'tally.example/acme');
 * key.verifierKey;  // give this to verifiers
 */
export async function loadOrCreateEngineKey(path: string, name: string): Promise<EngineKey> {
  assertKeyName(name);
  try {
    return await loadEngineKeyFile(path, name);
  } catch (e) {
    if (!(e instanceof TallyError) || e.code !== 'TALLY_KEY_FILE_NOT_FOUND') throw e;
  }
  const key = generateEngineKey(name);
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await mkdir(dir, { recursive: true, mode: KEY_DIR_MODE });
    const handle = await open(tmp, 'wx', KEY_FILE_MODE);
    try {
      await handle.chmod(KEY_FILE_MODE);
      await handle.writeFile(`${formatPrivateKey(key)}\n`, { encoding: 'utf8' });
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (cause) {
    await unlink(tmp).catch(() => undefined);
    throw new TallyError('TALLY_KEY_FILE_IO', 'Cannot write the engine key file.', { details: path, cause });
  }
  try {
    await link(tmp, path);
  } catch (cause) {
    const code = errnoCode(cause);
    if (code === 'EEXIST') {
      // Another process created the key first: use theirs.
      await unlink(tmp).catch(() => undefined);
      return loadEngineKeyFile(path, name);
    }
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') {
      try {
        await rename(tmp, path);
        await syncDir(dir);
        return key;
      } catch (renameCause) {
        await unlink(tmp).catch(() => undefined);
        throw new TallyError('TALLY_KEY_FILE_IO', 'Cannot publish the engine key file.', { details: path, cause: renameCause });
      }
    }
    await unlink(tmp).catch(() => undefined);
    throw new TallyError('TALLY_KEY_FILE_IO', 'Cannot publish the engine key file.', { details: path, cause });
  }
  await unlink(tmp).catch(() => undefined);
  await syncDir(dir);
  return key;
}
