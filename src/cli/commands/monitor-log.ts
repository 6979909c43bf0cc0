/**
 * `tally monitor --log <url|dir> --log-key <vkey>`: follows the engine log
 * through its tlog-tiles read API (a `tally serve --log-key` prefix, any
 * static host of `tally tiles export`, or that directory itself), checks each
 * checkpoint extends the last, lists the sessions opened and sealed, and
 * exits 1 on a fork or an equivocation (docs/PROTOCOL.md §15.7).
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { LogSource } from '../../log/monitor.js';
import { CliError, EXIT, println, str, type CommandIO } from '../command.js';
import { countOption, readTextFile, verifierKeysFor, writeTextFile } from './checkpoint.js';

type Values = Record<string, unknown>;

/** The log's resources over HTTP(S) below `base`, or from a directory of exported tiles. */
function sourceOf(where: string, io: CommandIO): LogSource {
  if (/^https?:\/\/\S+$/.test(where)) {
    const base = where.replace(/\/+$/, '');
    return async (path) => {
      try {
        const res = await fetch(`${base}/${path}`, { signal: AbortSignal.timeout(10_000) });
        const body = new Uint8Array(await res.arrayBuffer());
        return res.ok ? { ok: true, body } : { ok: false, message: `GET ${path}: HTTP ${res.status}` };
      } catch (e) {
        return { ok: false, message: `GET ${path}: ${(e as Error).message}` };
      }
    };
  }
  const dir = resolve(io.cwd, where);
  return async (path) => {
    try {
      return { ok: true, body: new Uint8Array(await readFile(join(dir, ...path.split('/')))) };
    } catch (e) {
      return { ok: false, message: `${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
    }
  };
}

/** Runs the log monitor; returns the exit code. */
export async function monitorLog(values: Values, io: CommandIO): Promise<number> {
  const where = str(values, 'log')!;
  if (where === '') throw new CliError('--log <url|dir> must not be empty');
  if (values['log-key'] === undefined) throw new CliError("--log needs --log-key <vkey>: the log's verifier key, named as its origin");
  for (const o of ['url', 'session', 'key']) if (values[o] !== undefined) throw new CliError(`--${o} follows one session; --log follows the engine log (give one or the other)`);
  const logVerifiers = await verifierKeysFor(values, io, 'log-key');
  const rounds = countOption(values, 'rounds') ?? 10;
  const intervalMs = countOption(values, 'interval', 0) ?? 1000;
  const cpPath = str(values, 'checkpoint');
  const seed = cpPath === undefined ? undefined : readTextFile(cpPath, io, 'the checkpoint');
  const json = values['json'] === true;
  const { monitorEngineLog } = await import('../../log/monitor.js');
  const r = await monitorEngineLog({
    source: sourceOf(where, io),
    logVerifiers,
    rounds,
    intervalMs,
    ...(seed === undefined ? {} : { seed }),
    onRound: (x) => {
      if (json) return println(io.stdout, JSON.stringify(x));
      if (x.kind === 'unavailable') return println(io.stderr, `round ${x.round}: unavailable: ${x.message}`);
      println(io.stdout, `round ${x.round}: consistent ${x.from} -> ${x.size} leaves, root ${x.root}`);
      for (const e of x.events) {
        const l = e.leaf;
        println(io.stdout, l.kind === 'open' ? `  leaf ${e.index}: opened  ${l.session}` : `  leaf ${e.index}: ${l.seal ? 'sealed ' : 'signed '} ${l.origin} (${l.size} entries, root ${l.root})`);
      }
    },
  });
  if (r.ok) {
    if (json) println(io.stdout, JSON.stringify({ ok: true, rounds: r.rounds, size: r.latest?.size ?? null, root: r.latest?.root ?? null, opened: r.opened.length, unsealed: r.unsealed }));
    else {
      println(io.stdout, `ok: ${r.rounds} rounds, no fork${r.latest ? ` (latest ${r.latest.size} leaves)` : ''}; ${r.opened.length} sessions opened, ${r.unsealed.length} not sealed`);
      for (const s of r.unsealed) println(io.stdout, `  not sealed: ${s}`);
    }
    return EXIT.ok;
  }
  const out = str(values, 'evidence');
  if (out !== undefined && r.kind !== 'bad-log') writeTextFile(out, `${JSON.stringify(r, null, 2)}\n`, io, 'the evidence');
  if (json) println(io.stdout, JSON.stringify(r));
  if (r.kind === 'bad-log') println(io.stderr, `invalid: ${r.message}`);
  else if (r.kind === 'fork') {
    println(io.stderr, `FORK: ${r.code}: ${r.message}`);
    if (!json) {
      println(io.stdout, '--- held checkpoint (signed) ---');
      io.stdout.write(r.held);
      println(io.stdout, '--- served checkpoint (signed) ---');
      io.stdout.write(r.served);
    }
  } else {
    println(io.stderr, `EQUIVOCATION: ${r.message}`);
    if (!json) for (const e of r.leaves) println(io.stdout, `leaf ${e.index}: ${JSON.stringify(e.leaf)}`);
  }
  return EXIT.invalid;
}
