/** Temporary directories for SQLite files, removed after the test file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dirs: string[] = [];

/** A fresh empty directory under the OS temp dir. */
export function tempDir(tag: string): string {
  const d = mkdtempSync(join(tmpdir(), `tally-${tag}-`));
  dirs.push(d);
  return d;
}

/** Removes every directory made by {@link tempDir}. */
export function removeTempDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}
