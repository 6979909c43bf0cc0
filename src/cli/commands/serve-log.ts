/**
 * `tally serve`'s engine log (docs/PROTOCOL.md §15): the tiles routes of
 * `--log-key`, and — with a witness policy — the witnesses cosigning the
 * engine log at `--log-cosign-interval` within `--log-cosign-budget` per
 * witness (§15.6). With the log on, session checkpoints go to witnesses only
 * with `--witness-sessions`.
 */
import { TallyError } from '../../protocol/index.js';
import type { TileRoutes } from '../../server/http-tiles.js';
import type { Logger } from '../../server/log.js';
import type { CosignatureStore, TranscriptStore } from '../../store/index.js';
import type { EngineWitness } from '../../witness/index.js';
import { CliError, EXIT, str, type CommandIO } from '../command.js';
import { readTextFile } from './checkpoint.js';

type Values = Record<string, unknown>;

/** Help lines of the engine log's options. */
export const SERVE_LOG_HELP = `Engine log (optional; docs/PROTOCOL.md §15):
  --log-key <file>       the engine log's key, whose name is the log's origin (default
                         $TALLY_LOG_KEY when set; a missing file is created, owner-only):
                         serves the C2SP tlog-tiles read API without a token at
                         <prefix>/checkpoint, <prefix>/tile/<L>/<N>[.p/<W>] and
                         <prefix>/tile/entries/<N>[.p/<W>]
  --log-origin <origin>  the origin when the key is created (default $TALLY_LOG_ORIGIN,
                         else <engine name>/log)
  --log-prefix <path>    URL path prefix (default /log)
  --log-interval <ms>    sign a new log checkpoint at most this often (default 5000)
  --log-identity <file>  the log's signed identity (tally log identity), published at
                         <prefix>/identity; it must name this log key
  With --witness-policy, the witnesses cosign the ENGINE LOG (one origin, its key
  named as it) and <prefix>/checkpoint carries their cosignatures; session
  checkpoints are no longer submitted unless --witness-sessions:
  --log-cosign-interval <ms>  submit the log's checkpoint at most this often (default 5000)
  --log-cosign-budget <n>/<s> at most n add-checkpoint requests per witness in any
                         s seconds (default 12/60)
  --witness-sessions     also submit every session checkpoint (one origin each), as
                         without the engine log`;

/** parseArgs options of the engine log. */
export const SERVE_LOG_OPTIONS = {
  'log-key': { type: 'string' },
  'log-origin': { type: 'string' },
  'log-prefix': { type: 'string' },
  'log-interval': { type: 'string' },
  'log-identity': { type: 'string' },
  'log-cosign-interval': { type: 'string' },
  'log-cosign-budget': { type: 'string' },
  'witness-sessions': { type: 'boolean' },
} as const;

function nonNegative(values: Values, key: string): number | undefined {
  const v = str(values, key);
  if (v === undefined) return undefined;
  if (!/^[0-9]{1,12}$/.test(v)) throw new CliError(`--${key} must be an integer >= 0`);
  return Number(v);
}

/** The log key's path (`--log-key`, else `$TALLY_LOG_KEY`), or `undefined`. */
export function logKeyPath(values: Values, io: CommandIO): string | undefined {
  return str(values, 'log-key') ?? (io.env['TALLY_LOG_KEY'] || undefined);
}

/** Whether session checkpoints still go to witnesses: always without the engine log, else only with --witness-sessions. */
export function witnessSessions(values: Values, io: CommandIO): boolean {
  const on = logKeyPath(values, io) !== undefined;
  if (!on && values['witness-sessions'] === true) throw new CliError('--witness-sessions needs --log-key (without the engine log, session checkpoints always go to witnesses)');
  return !on || values['witness-sessions'] === true;
}

/** The engine log's tiles routes of `--log-key` (else `$TALLY_LOG_KEY`), or `undefined` when neither is given. */
export async function engineLogRoutes(values: Values, io: CommandIO, store: TranscriptStore): Promise<TileRoutes | undefined> {
  const path = logKeyPath(values, io);
  if (path === undefined) {
    for (const o of ['log-origin', 'log-prefix', 'log-interval', 'log-identity', 'log-cosign-interval', 'log-cosign-budget']) if (str(values, o) !== undefined) throw new CliError(`--${o} needs --log-key (or $TALLY_LOG_KEY)`);
    return undefined;
  }
  const prefix = str(values, 'log-prefix') ?? '/log';
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(prefix)) throw new CliError('--log-prefix must be a path like /log (segments of letters, digits, . _ ~ -; no trailing slash)');
  const interval = nonNegative(values, 'log-interval') ?? 5000;
  const { EngineLog, loadLogKey } = await import('../../log/index.js');
  const { hasEngineLog } = await import('../../store/index.js');
  if (!hasEngineLog(store)) throw new CliError(`the store ${store.name} keeps no engine log`);
  const origin = str(values, 'log-origin');
  const engineName = str(values, 'engine-name');
  let key;
  try {
    key = await loadLogKey({ path, env: io.env, cwd: io.cwd, ...(origin === undefined ? {} : { origin }), ...(engineName === undefined ? {} : { engineName }) });
  } catch (e) {
    if (e instanceof TallyError) throw new CliError(`log key: ${e.shortMessage}${e.details ? ` (${e.details})` : ''}`, EXIT.io, e.code);
    throw e;
  }
  const identityFile = str(values, 'log-identity');
  let identity: string | undefined;
  if (identityFile !== undefined) {
    identity = readTextFile(identityFile, io, 'the log identity');
    const { openLogIdentity } = await import('../../identity/index.js');
    const id = openLogIdentity(identity);
    if (!id.ok) throw new CliError(`--log-identity ${identityFile}: ${id.code}: ${id.message}`, EXIT.usage, id.code);
    if (id.identity.log_key !== key.verifierKey) throw new CliError(`--log-identity ${identityFile} names the log key ${id.identity.log_key}, not this log's ${key.verifierKey}`, EXIT.usage, 'TALLY_LOG_IDENTITY_WRONG_LOG');
  }
  const log = new EngineLog({ store, key, minIntervalMs: interval });
  try {
    await log.sync(); // start-up (§15.3): the store's log key, tiles and last signed root are checked before serving
  } catch (e) {
    if (e instanceof TallyError && e.code.startsWith('TALLY_LOG_')) throw new CliError(`the engine log: ${e.shortMessage}${e.details ? ` (${e.details})` : ''}`, EXIT.invalid, e.code);
    throw e;
  }
  return { prefix, log, ...(identity === undefined ? {} : { identity }) };
}

/** A running cosigning loop: `stop()` clears its timer. */
export interface LogCosigning {
  readonly routes: TileRoutes;
  stop(): void;
}

/**
 * Starts the witnesses cosigning the engine log of `routes`: one round now,
 * then one per `--log-cosign-interval`; the routes returned serve the
 * checkpoint with the cosignatures collected. Each round's outcome is a log
 * line; a witness holding a log the store lost is an error line, and the
 * loop submits nothing more.
 */
export async function startLogCosigning(values: Values, routes: TileRoutes, witnesses: readonly EngineWitness[], store: TranscriptStore, logger: Logger): Promise<LogCosigning> {
  const intervalMs = nonNegative(values, 'log-cosign-interval') ?? 5000;
  const b = str(values, 'log-cosign-budget');
  const m = b === undefined ? undefined : /^([1-9][0-9]{0,8})\/([1-9][0-9]{0,8})$/.exec(b);
  if (m === null) throw new CliError('--log-cosign-budget must be <requests>/<seconds>, e.g. 12/60');
  const { LogCosigner } = await import('../../witness/index.js');
  const st = store as Partial<CosignatureStore>;
  const durable = typeof st.recordCosignature === 'function' && typeof st.witnessSize === 'function' ? (store as unknown as CosignatureStore) : undefined;
  const cosigner = new LogCosigner({ log: routes.log, witnesses, intervalMs, ...(durable ? { store: durable } : {}), ...(m === undefined ? {} : { budget: { requests: Number(m[1]), windowMs: Number(m[2]) * 1000 } }) });
  let stopped = false;
  const tick = async (): Promise<void> => {
    try {
      const r = await cosigner.round();
      if (r) logger.debug({ event: 'log-cosign', origin: r.checkpoint.origin, size: r.checkpoint.size, cosignedBy: r.cosignedBy, outcomes: r.outcomes }, 'engine log cosigning round');
      const c = cosigner.conflict;
      if (c !== undefined) logger.error({ event: 'log-witness-conflict', detail: c }, 'a witness holds an engine log the store does not have: nothing more is submitted');
    } catch (e) {
      if (!(e instanceof TallyError && e.code === 'TALLY_LOG_WITNESS_CONFLICT')) logger.warn({ event: 'log-cosign-failed', detail: (e as Error).message }, 'engine log cosigning round failed');
    }
  };
  await tick();
  const timer = setInterval(() => {
    if (!stopped) void tick();
  }, Math.max(intervalMs, 100));
  timer.unref();
  return {
    routes: { ...routes, cosigned: (cp) => cosigner.cosigned(cp) },
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
