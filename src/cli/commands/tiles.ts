import { resolve } from 'node:path';
import { TallyError } from '../../protocol/index.js';
import { CliError, EXIT, emit, str, type Command } from '../command.js';
import { KEY_HELP, engineKeyFor, storeLocation } from './checkpoint.js';

export const tilesCommand: Command = {
  name: 'tiles',
  summary: "Write the engine log, or one session's tree, as C2SP tlog-tiles files (checkpoint, tiles, entry bundles) for any static host.",
  help: `Usage: tally tiles export <dir> [--db <location>] [--log-key <file>] [--log-origin <origin>] [--json]
       tally tiles export <dir> --session <id> [--db <location>] [--key <file>] [--json]

Signs a checkpoint of the engine log (every session the engine opened and
every session checkpoint it signed, docs/PROTOCOL.md §15) if it grew, then
writes under <dir> exactly what 'tally serve --log-key' serves under its
prefix: <dir>/checkpoint, <dir>/tile/<L>/<N>[.p/<W>] and
<dir>/tile/entries/<N>[.p/<W>] for that checkpoint's size, and the partial tiles of
every earlier size the log signed whose full tile is not there yet (C2SP tlog-tiles).
Serve <dir> from any static host, object store or CDN.

With --session, writes that session's own tree instead (docs/PROTOCOL.md
§15.4.1): signs a checkpoint of every entry with the engine key (the same
bytes again when that size is signed already), then writes exactly what
'tally serve --key' answers under /sessions/<id>/tiles: the checkpoint, the
hash tiles over the entry hashes, and entry bundles of the entry bytes.
A session with an entry over 65535 bytes (an entry bundle's limit) is
refused (TALLY_TILES_ENTRY_TOO_LARGE) and no checkpoint file is written.

Options:
  --session <id>         export this session's tree (64 hex), with the engine key
${KEY_HELP}
  --db <location>        the store (default $TALLY_DB or .tally/tally.db)
  --log-key <file>       the log key, named as the log's origin (default $TALLY_LOG_KEY,
                         else .tally/log.key; created owner-only when missing). A store
                         records the first log key that signs its log: another origin
                         or key is refused (TALLY_LOG_KEY_MISMATCH)
  --log-origin <origin>  the origin when the key is created (default $TALLY_LOG_ORIGIN,
                         else <engine name>/log)
  --engine-name <name>   the engine name the default origin derives from
                         (default $TALLY_ENGINE_NAME, else tally.local)
  --json                 print {"ok", "origin", "size", "root", "files", "dir", "logKey"}
                         ("verifierKey", the engine key's, in place of "logKey" with --session)

Prints the checkpoint's origin, size and root, and the number of files.
Exit codes: 0 written, 1 refused (an empty log, another log key than the store's,
stored tiles that disagree with the leaves, an unknown session, an entry too large
for a bundle, or the signing log refused), 2 usage, 3 I/O.`,
  options: { db: { type: 'string' }, 'log-key': { type: 'string' }, 'log-origin': { type: 'string' }, 'engine-name': { type: 'string' }, session: { type: 'string' }, key: { type: 'string' }, name: { type: 'string' } },
  async run({ values, positionals }, io) {
    if (positionals[0] !== 'export' || positionals.length !== 2) throw new CliError("usage: tally tiles export <dir>. Run 'tally tiles --help'.");
    const dir = resolve(io.cwd, positionals[1]!);
    const session = str(values, 'session');
    if (session !== undefined) return exportSession(values, io, dir, session);
    for (const k of ['key', 'name']) if (values[k] !== undefined) throw new CliError(`--${k} is the engine key of --session; the engine log is signed with --log-key`);
    const [{ EngineLog, exportTiles, loadLogKey }, { hasEngineLog, openStore }] = await Promise.all([import('../../log/index.js'), import('../../store/index.js')]);
    const path = str(values, 'log-key');
    const origin = str(values, 'log-origin');
    const engineName = str(values, 'engine-name');
    let key;
    try {
      key = await loadLogKey({ env: io.env, cwd: io.cwd, ...(path === undefined ? {} : { path }), ...(origin === undefined ? {} : { origin }), ...(engineName === undefined ? {} : { engineName }) });
    } catch (e) {
      if (e instanceof TallyError) throw new CliError(`log key: ${e.shortMessage}${e.details ? ` (${e.details})` : ''}`, EXIT.io, e.code);
      throw e;
    }
    const store = await openStore(storeLocation(values, io));
    try {
      if (!hasEngineLog(store)) throw new CliError(`the store ${store.name} keeps no engine log`, EXIT.usage);
      const out = await exportTiles(new EngineLog({ store, key }), dir);
      return emit(io, values, { ok: true, origin: out.checkpoint.origin, size: out.checkpoint.size, root: out.checkpoint.root, files: out.files.length, dir, logKey: key.verifierKey }, () => [
        `engine log ${out.checkpoint.origin}: size ${out.checkpoint.size}, root ${out.checkpoint.root}`,
        `wrote ${out.files.length} files to ${dir}`,
        `log key: ${key.verifierKey}`,
      ]);
    } catch (e) {
      if (e instanceof TallyError && (e.code.startsWith('TALLY_LOG_') || e.code.startsWith('TALLY_SIGN_'))) throw new CliError(`${e.shortMessage}${e.details ? ` (${e.details})` : ''}`, EXIT.invalid, e.code);
      if (e instanceof TallyError || (e as NodeJS.ErrnoException).code !== undefined) throw new CliError(`cannot write the tiles: ${(e as Error).message}`, EXIT.io, (e as TallyError).code ?? 'TALLY_CLI_IO');
      throw e;
    } finally {
      await store.close();
    }
  },
};

/** `tally tiles export <dir> --session <id>`: the session's tree as tlog-tiles, signed with the engine key. */
async function exportSession(values: Record<string, unknown>, io: Parameters<Command['run']>[1], dir: string, sessionId: string): Promise<number> {
  if (!/^[0-9a-f]{64}$/.test(sessionId)) throw new CliError('--session must be 64 lowercase hex characters');
  for (const k of ['log-key', 'log-origin', 'engine-name']) if (values[k] !== undefined) throw new CliError(`--${k} is the engine log's; a session's tree is signed with the engine key (--key)`);
  const key = await engineKeyFor(values, io);
  const [{ exportSessionTiles }, { openStore }, { createNotary, SessionTrees }, { createEngine }] = await Promise.all([import('../../log/session-tiles.js'), import('../../store/index.js'), import('../../receipt/index.js'), import('../../engine.js')]);
  const store = await openStore(storeLocation(values, io));
  try {
    const trees = new SessionTrees();
    const out = await exportSessionTiles({ engine: createEngine({ store }), notary: createNotary({ key, trees }), trees }, sessionId, dir);
    return emit(io, values, { ok: true, origin: out.checkpoint.origin, size: out.checkpoint.size, root: out.checkpoint.root, files: out.files.length, dir, verifierKey: key.verifierKey }, () => [
      `session ${out.checkpoint.origin}: size ${out.checkpoint.size}, root ${out.checkpoint.root}`,
      `wrote ${out.files.length} files to ${dir}`,
      `engine key: ${key.verifierKey}`,
    ]);
  } catch (e) {
    if (e instanceof TallyError && (e.code === 'TALLY_TILES_UNKNOWN_SESSION' || e.code === 'TALLY_TILES_ENTRY_TOO_LARGE' || e.code.startsWith('TALLY_SIGN_'))) throw new CliError(e.shortMessage, EXIT.invalid, e.code);
    if (e instanceof TallyError || (e as NodeJS.ErrnoException).code !== undefined) throw new CliError(`cannot write the tiles: ${(e as Error).message}`, EXIT.io, (e as TallyError).code ?? 'TALLY_CLI_IO');
    throw e;
  } finally {
    await store.close();
  }
}
