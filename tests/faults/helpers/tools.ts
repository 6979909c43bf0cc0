/**
 * The fault-injection tools these tests need, found or not. The suite runs
 * where they are installed (`.ci/run` installs them) and skips elsewhere,
 * saying exactly what is missing and how to install it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** libfiu's preload libraries (Debian package fiu-utils). */
export const FIU_RUN_PRELOAD = '/usr/lib/fiu/fiu_run_preload.so';
export const FIU_POSIX_PRELOAD = '/usr/lib/fiu/fiu_posix_preload.so';

/** libfaketime's preload library (Debian package libfaketime). */
export const FAKETIME_PRELOAD = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1'].find((p) => existsSync(p));

/** Whether `cmd` is on the PATH. */
export function onPath(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** Why the libfiu tests skip, or `undefined` when they run. */
export const fiuSkip: string | undefined =
  existsSync(FIU_RUN_PRELOAD) && existsSync(FIU_POSIX_PRELOAD) && onPath('fiu-ctrl') ? undefined : 'libfiu is not installed (apt-get install -y fiu-utils)';

/** Why the libfaketime tests skip, or `undefined` when they run. */
export const faketimeSkip: string | undefined = FAKETIME_PRELOAD !== undefined ? undefined : 'libfaketime is not installed (apt-get install -y faketime)';

/** Why the mount tests skip (we need root and a permitted `mount -t tmpfs`, tried once here), or `undefined`. */
export const mountSkip: string | undefined = (() => {
  if (process.getuid?.() !== 0) return 'not root: cannot mount a small tmpfs';
  if (!onPath('mount') || !onPath('umount')) return 'no mount/umount command';
  const probe = mkdtempSync(join(tmpdir(), 'tally-mount-probe-'));
  try {
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { encoding: 'utf8' });
    if (m.status !== 0) return `mount -t tmpfs is not permitted here (${m.stderr.trim() || `exit ${m.status}`})`;
    spawnSync('umount', [probe]);
    return undefined;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
})();

/** Prints, once per file, which fault tests skip and why. */
export function warnSkips(file: string, reasons: readonly (string | undefined)[]): void {
  for (const r of reasons) if (r !== undefined) console.warn(`[tests/faults/${file}] SKIPPED: ${r}. CI installs the tools in .ci/run.`);
}

/** Sends one libfiu remote-control command to a process started with the fiu preload (waits for its answer). */
export function fiuCtrl(fifoPrefix: string, pid: number, command: string): void {
  execFileSync('fiu-ctrl', ['-f', fifoPrefix, '-c', command, String(pid)], { stdio: 'pipe', timeout: 20_000 });
}

/** The environment that loads libfiu into a child (what `fiu-run -x` sets), remote-controlled through `<fifoPrefix>-<pid>.in/out`; `extra` preload libraries come after libfiu's. */
export function fiuEnv(fifoPrefix: string, extra: readonly string[] = []): Record<string, string> {
  return { LD_PRELOAD: [FIU_RUN_PRELOAD, FIU_POSIX_PRELOAD, ...extra].join(' '), FIU_CTRL_FIFO: fifoPrefix, FIU_ENABLE: '' };
}

/** libfiu's shared library (the preload libraries link it; the file-mmap point below links it too). */
const LIBFIU = ['/usr/lib/libfiu.so.0', '/usr/lib/x86_64-linux-gnu/libfiu.so.0', '/usr/lib/aarch64-linux-gnu/libfiu.so.0'].find((p) => existsSync(p));

/**
 * The libfiu point `tally/mm/mmap-file` (file-backed mmap only; see
 * `helpers/fiu-mmap-file.c` for why libfiu's own `posix/mm/mmap` cannot be
 * used inside node), compiled into `dir`: the preload library's path, or why
 * the test skips.
 */
export function fiuMmapFile(dir: string): { readonly lib: string } | { readonly skip: string } {
  if (fiuSkip !== undefined) return { skip: fiuSkip };
  if (LIBFIU === undefined) return { skip: 'libfiu.so.0 not found (apt-get install -y libfiu0)' };
  if (!onPath('cc')) return { skip: 'no C compiler to build the file-mmap failure point (apt-get install -y gcc)' };
  const out = join(dir, 'fiu-mmap-file.so');
  const src = join(import.meta.dirname, 'fiu-mmap-file.c');
  const r = spawnSync('cc', ['-shared', '-fPIC', '-O2', '-o', out, src, '-ldl', LIBFIU], { encoding: 'utf8' });
  return r.status === 0 ? { lib: out } : { skip: `cannot compile ${src}: ${r.stderr.trim()}` };
}
