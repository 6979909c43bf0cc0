/**
 * Store files made read-only under a running process. Root ignores `chmod`,
 * and Linux refuses `remount,ro` while a process holds a file open for
 * writing, so the files get the immutable flag (`chattr +i`): on this kernel
 * a write through a descriptor opened before the flag was set then fails
 * with EPERM, as on a read-only filesystem. The flag needs root, chattr, and
 * a filesystem that honours it (ext4, xfs, btrfs, tmpfs do; ramfs and some
 * overlay filesystems do not): the temp directory when it does, otherwise a
 * small ext4 image loop-mounted for the test file.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onPath } from './tools.js';

/** A directory where `chattr +i` stops writes on open files, and how to give it back; or why there is none. */
export type ImmutableRoot = { readonly dir: string; readonly how: string; release(): void } | { readonly skip: string };

/** Why `chattr +i` does not stop a write through an open descriptor under `dir`, or `undefined` when it does. */
function probe(dir: string): string | undefined {
  const file = join(dir, 'chattr-probe');
  const fd = openSync(file, 'w');
  try {
    const on = spawnSync('chattr', ['+i', file], { encoding: 'utf8' });
    if (on.status !== 0) return `chattr +i is not supported on the filesystem of ${dir} (${on.stderr.trim() || `exit ${on.status}`})`;
    try {
      writeSync(fd, 'x');
      return `this kernel lets an already open descriptor write to an immutable file under ${dir}`;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      return code === 'EPERM' ? undefined : `a write to an immutable file failed with ${code}, not EPERM`;
    }
  } finally {
    closeSync(fd);
    spawnSync('chattr', ['-i', file]);
    rmSync(file, { force: true });
  }
}

/** A 32 MiB ext4 image loop-mounted under `base`, or why it could not be made. */
function loopExt4(base: string): { mnt: string } | { why: string } {
  if (!onPath('mkfs.ext4') || !onPath('mount')) return { why: 'no mkfs.ext4/mount' };
  const img = join(base, 'fs.img');
  const mnt = join(base, 'mnt');
  mkdirSync(mnt);
  closeSync(openSync(img, 'w'));
  truncateSync(img, 32 * 1024 * 1024);
  const mk = spawnSync('mkfs.ext4', ['-q', '-F', img], { encoding: 'utf8' });
  if (mk.status !== 0) return { why: `mkfs.ext4 failed (${mk.stderr.trim() || `exit ${mk.status}`})` };
  const m = spawnSync('mount', ['-o', 'loop', img, mnt], { encoding: 'utf8' });
  if (m.status !== 0) return { why: `mount -o loop is not permitted here (${m.stderr.trim() || `exit ${m.status}`})` };
  return { mnt };
}

/** Finds (or mounts) a directory for immutable store files; call `release()` when the test file is done. */
export function immutableRoot(): ImmutableRoot {
  if (process.getuid?.() !== 0) return { skip: 'not root: chattr +i needs CAP_LINUX_IMMUTABLE' };
  if (!onPath('chattr')) return { skip: 'no chattr (apt-get install -y e2fsprogs)' };
  const base = mkdtempSync(join(tmpdir(), 'tally-immutable-'));
  const remove = () => rmSync(base, { recursive: true, force: true });
  const here = probe(base);
  if (here === undefined) return { dir: base, how: `the temp directory ${tmpdir()}`, release: remove };
  const loop = loopExt4(base);
  if ('why' in loop) {
    remove();
    return { skip: `${here}, and no loop-mounted ext4 instead: ${loop.why}` };
  }
  const unmount = () => {
    spawnSync('umount', [loop.mnt]);
    remove();
  };
  const there = probe(loop.mnt);
  if (there !== undefined) {
    unmount();
    return { skip: `${here}; on a loop-mounted ext4: ${there}` };
  }
  return { dir: loop.mnt, how: `a loop-mounted ext4 (${here})`, release: unmount };
}

/** Sets (`on`) or clears the immutable flag of each path that exists. */
export function setImmutable(paths: readonly string[], on: boolean): string[] {
  const present = paths.filter((p) => existsSync(p));
  if (present.length > 0) execFileSync('chattr', [on ? '+i' : '-i', ...present], { stdio: 'pipe' });
  return present;
}

/**
 * A SQLite database file and its write-ahead log: the files that hold data.
 * Not the `-shm` index: SQLite maps it into memory, and a store into a mapped
 * page of an immutable file is SIGBUS, which no process survives (README,
 * "What survives what").
 */
export function sqliteDataFiles(db: string): string[] {
  return [db, `${db}-wal`];
}

/** A fresh directory under `root` for one test's store files (removed with the root). */
export function storeDirIn(root: ImmutableRoot, tag: string): string {
  if (!('dir' in root)) throw new Error(`no directory for immutable files: ${root.skip}`);
  return mkdtempSync(join(root.dir, `${tag}-`));
}
