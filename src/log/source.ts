/**
 * Where a reader of the engine log gets its C2SP tlog-tiles resources
 * (docs/PROTOCOL.md §15.4): over HTTP(S) below a prefix URL (`tally serve
 * --log-key`, any static host of `tally tiles export`), or from the exported
 * directory itself. An unreachable resource is a result, never evidence.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** Where the log is read: a path below the prefix (`checkpoint`, `tile/entries/000.p/5`) → its bytes. */
export type LogSource = (path: string) => Promise<{ readonly ok: true; readonly body: Uint8Array } | { readonly ok: false; readonly message: string }>;

/** How long one GET may take before it is reported unavailable. */
const FETCH_TIMEOUT_MS = 10_000;

/**
 * The log's resources below `where`: an `http(s)://` prefix URL (each GET
 * with `headers`, e.g. a session's tiles behind a bearer token), else a
 * directory (resolved against `cwd`).
 *
 * @example
 * const source = logSource('https://tally.example/log');
 * const cp = await source('checkpoint');
 */
export function logSource(where: string, cwd = process.cwd(), headers: Readonly<Record<string, string>> = {}): LogSource {
  if (/^https?:\/\/\S+$/.test(where)) {
    const base = where.replace(/\/+$/, '');
    return async (path) => {
      try {
        const res = await fetch(`${base}/${path}`, { headers, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
        const body = new Uint8Array(await res.arrayBuffer());
        return res.ok ? { ok: true, body } : { ok: false, message: `GET ${path}: HTTP ${res.status}` };
      } catch (e) {
        return { ok: false, message: `GET ${path}: ${(e as Error).message}` };
      }
    };
  }
  const dir = resolve(cwd, where);
  return async (path) => {
    try {
      return { ok: true, body: new Uint8Array(await readFile(join(dir, ...path.split('/')))) };
    } catch (e) {
      return { ok: false, message: `${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
    }
  };
}
