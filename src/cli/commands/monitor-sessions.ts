/**
 * Each session's own entries for `tally monitor --log --sessions <url|dir>`
 * (docs/PROTOCOL.md §15.10): from a `tally serve` engine (`GET
 * /sessions/<id>/bundle?from=N&limit=M`, with the token of $TALLY_TOKEN), or
 * from a directory of bundles (`<dir>/<id>.jsonl`, else
 * `<dir>/<id>/bundle.jsonl`, else `<dir>/bundle.jsonl` when its genesis is
 * that session's — a `tally export` or `tally demo --out` directory); or,
 * spelled `tiles:<url|dir>`, from each session's C2SP tlog-tiles entry
 * bundles (docs/PROTOCOL.md §15.4.1: `<url>/sessions/<id>/tiles`, with the
 * token, or `<dir>/<id>`, one `tally tiles export <dir>/<id> --session <id>`
 * each). The lines are the entries' exact bytes; the monitor hashes them into
 * the session's tree.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { SessionEntriesSource } from '../../log/monitor.js';
import { LogReader } from '../../log/reader.js';
import { logSource } from '../../log/source.js';
import { BUNDLE_RANGE_MAX, toHex } from '../../protocol/index.js';
import { entryLeafHash } from '../../receipt/bytes.js';
import type { CommandIO } from '../command.js';

/** The lines of a JSONL body (a final newline ends the last; an empty body has none). */
function lines(body: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    if (body[i] === 0x0a) {
      out.push(body.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < body.length) out.push(body.subarray(start));
  return out;
}

/** The session entries at `where`: an `http(s)://` engine base URL, else a directory of bundles. */
export function sessionEntriesSource(where: string, io: CommandIO): SessionEntriesSource {
  if (where.startsWith('tiles:')) return sessionTilesSource(where.slice('tiles:'.length), io);
  if (/^https?:\/\/\S+$/.test(where)) {
    const base = where.replace(/\/+$/, '');
    const token = io.env['TALLY_TOKEN'];
    return async (sessionId, from, to) => {
      if (!/^[0-9a-f]{64}$/.test(sessionId)) return { ok: false, message: `the origin's session id ${JSON.stringify(sessionId.slice(0, 80))} is not 64 hex` };
      const path = `/sessions/${sessionId}/bundle?from=${from}&limit=${Math.min(BUNDLE_RANGE_MAX, Math.max(1, to - from))}`;
      try {
        const res = await fetch(`${base}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(10_000) });
        const body = new Uint8Array(await res.arrayBuffer());
        return res.ok ? { ok: true, entries: lines(body) } : { ok: false, message: `GET ${path}: HTTP ${res.status}` };
      } catch (e) {
        return { ok: false, message: `GET ${path}: ${(e as Error).message}` };
      }
    };
  }
  const dir = resolve(io.cwd, where);
  const read = new Map<string, Promise<Uint8Array[] | string>>();
  const bundleOf = async (sessionId: string): Promise<Uint8Array[] | string> => {
    for (const p of [join(dir, `${sessionId}.jsonl`), join(dir, sessionId, 'bundle.jsonl'), join(dir, 'bundle.jsonl')]) {
      try {
        const got = lines(new Uint8Array(await readFile(p)));
        // The directory's own bundle.jsonl is this session's only when its genesis hashes to the session id.
        if (p === join(dir, 'bundle.jsonl') && (got[0] === undefined || toHex(entryLeafHash(got[0])) !== sessionId)) continue;
        return got;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return `${p}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
      }
    }
    return `no bundle ${sessionId}.jsonl, ${sessionId}/bundle.jsonl or bundle.jsonl of that session in ${where}`;
  };
  return async (sessionId, from, to) => {
    if (!/^[0-9a-f]{64}$/.test(sessionId)) return { ok: false, message: `the origin's session id ${JSON.stringify(sessionId.slice(0, 80))} is not 64 hex` };
    let p = read.get(sessionId);
    if (!p) read.set(sessionId, (p = bundleOf(sessionId)));
    const got = await p;
    return typeof got === 'string' ? { ok: false, message: got } : { ok: true, entries: got.slice(from, to) };
  };
}

/**
 * The session entries of each session's tiles below `where` (a `tally serve`
 * base URL: `<where>/sessions/<id>/tiles`, with $TALLY_TOKEN; else a directory:
 * `<where>/<id>`), read bundle by bundle as the spec's paths give them at the
 * size asked (a size the engine signed, so its partial bundle exists).
 */
function sessionTilesSource(where: string, io: CommandIO): SessionEntriesSource {
  const url = /^https?:\/\/\S+$/.test(where);
  const token = io.env['TALLY_TOKEN'];
  const readers = new Map<string, LogReader>();
  return async (sessionId, from, to) => {
    if (!/^[0-9a-f]{64}$/.test(sessionId)) return { ok: false, message: `the origin's session id ${JSON.stringify(sessionId.slice(0, 80))} is not 64 hex` };
    let r = readers.get(sessionId);
    if (!r) {
      const prefix = url ? `${where.replace(/\/+$/, '')}/sessions/${sessionId}/tiles` : join(resolve(io.cwd, where), sessionId);
      readers.set(sessionId, (r = new LogReader(logSource(prefix, io.cwd, url && token ? { authorization: `Bearer ${token}` } : {}))));
    }
    const got = await r.readTo(to);
    return got.ok ? { ok: true, entries: r.leaves.slice(from, to) } : { ok: false, message: got.message };
  };
}
