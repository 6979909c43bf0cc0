// The server, the engine and the store load only when `tally serve` runs (other commands start faster).
import { TallyError } from '../../protocol/index.js';
import type { Notary } from '../../receipt/index.js';
import type { Authenticator, Role } from '../../server/auth.js';
import { DEFAULT_LIMITS, type WireServerLimits } from '../../server/limits.js';
import { CliError, EXIT, jsonMode, println, str, type Command, type CommandIO } from '../command.js';
import { TIMEOUT_OPTIONS, timeoutHelp, timeoutsFromOptions } from '../http-options.js';
import { JUDGE_OPTIONS, judgeFromOptions, judgeHelp } from './judge-option.js';
import { cliRuler } from './session-io.js';
import { watchLauncher } from '../launcher.js';
import { SERVE_LOG_HELP, SERVE_LOG_OPTIONS, engineLogRoutes, logKeyPath, startLogCosigning, witnessSessions, type LogCosigning } from './serve-log.js';


function positiveInt(values: Record<string, unknown>, key: string, min = 1): number | undefined {
  const v = str(values, key);
  if (v === undefined) return undefined;
  if (!/^[0-9]{1,12}$/.test(v) || Number(v) < min) throw new CliError(`--${key} must be an integer >= ${min}`);
  return Number(v);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** `--metrics-bind host:port` (port 0 picks a free one; `[::1]:p` for IPv6). */
function bindOf(v: string | undefined): { host: string; port: number } | undefined {
  if (v === undefined) return undefined;
  const m = /^(?:\[([0-9a-fA-F:]+)\]|([A-Za-z0-9.-]+)):([0-9]{1,5})$/.exec(v);
  if (!m || Number(m[3]) > 65535) throw new CliError('--metrics-bind must be <host>:<port> (for example 127.0.0.1:9464)');
  return { host: m[1] ?? m[2]!, port: Number(m[3]) };
}

/**
 * The OpenTelemetry SDK for this server, loaded only here: metrics always (for
 * GET /metrics), OTLP export of spans and metrics with `--otel`. Without the
 * optional SDK packages, `--otel` is a usage error and plain serving goes on
 * without /metrics.
 */
async function startServeTelemetry(otel: boolean, env: CommandIO['env'], logger: import('../../server/log.js').Logger): Promise<import('../../telemetry/sdk.js').RunningTelemetry | undefined> {
  const { startTelemetry } = await import('../../telemetry/sdk.js');
  try {
    return await startTelemetry({ otlp: otel, env });
  } catch (e) {
    if (!(e instanceof TallyError)) throw e;
    if (otel || e.code !== 'TALLY_TELEMETRY_MISSING') throw new CliError(e.details ? `${e.shortMessage} (${e.details})` : e.shortMessage, EXIT.usage, e.code);
    const { sdkInstallLine } = await import('../../telemetry/sdk.js');
    logger.warn({ event: 'metrics-disabled', reason: e.shortMessage, install: sdkInstallLine(false) }, 'GET /metrics is disabled: the OpenTelemetry SDK packages are not installed');
    return undefined;
  }
}

/** `--hash-token` / `--new-token`: prints one configuration entry (and the new token). */
async function tokenLine(values: Record<string, unknown>, io: CommandIO): Promise<number> {
  const { ROLES, generateToken, hashToken, parseAuthConfig } = await import('../../server/auth.js');
  const role = str(values, 'role') ?? 'runtime';
  if (!(ROLES as readonly string[]).includes(role)) throw new CliError(`--role must be one of ${ROLES.join(', ')}`);
  const agents = ((values['agent'] as string[] | undefined) ?? []).filter((a) => a !== '');
  if (role === 'agent' && agents.length === 0) throw new CliError('an agent token needs at least one --agent <agent_id>');
  if (role !== 'agent' && agents.length > 0) throw new CliError('--agent is only for --role agent');
  const signer = str(values, 'signer');
  if (role === 'agent' && signer === undefined) throw new CliError('an agent token needs --signer <0x address>: the key its agents sign intents with (the token speaks for them only where spec.agents maps them to it)');
  if (role !== 'agent' && signer !== undefined) throw new CliError('--signer is only for --role agent');
  let token: string;
  const given = str(values, 'hash-token');
  if (values['new-token'] === true) {
    if (given !== undefined) throw new CliError('use either --hash-token or --new-token');
    token = generateToken();
  } else {
    token = given === '-' ? await readStdin() : given!;
  }
  if (token.length < 16 || token.length > 512 || !/^[!-~]+$/.test(token)) throw new CliError('a token must be 16–512 printable ASCII characters without spaces');
  const name = str(values, 'name') ?? `${role}-${hashToken(token).slice(0, 8)}`;
  const entry = { name, role: role as Role, ...(role === 'agent' ? { agents, signer } : {}), sha256: hashToken(token) };
  const check = parseAuthConfig({ tokens: [entry] });
  if (!check.ok) throw new CliError(check.problem);
  if (jsonMode(values)) {
    println(io.stdout, JSON.stringify({ ok: true, ...(values['new-token'] === true ? { token } : {}), entry }));
    return EXIT.ok;
  }
  if (values['new-token'] === true) {
    println(io.stderr, 'New token (shown once; give it to the caller). The line after it is its auth entry: save it as tokens.json, or append it to one (one entry per line), then run tally serve --auth tokens.json');
    println(io.stdout, token);
  }
  println(io.stdout, JSON.stringify(entry));
  return EXIT.ok;
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Serve the wire verbs over HTTP (JSON-RPC 2.0 at POST /rpc, GETs for graders) behind bearer tokens.',
  help: `Usage: tally serve [--port <n>] [--host <addr>] [--db <location>] [--auth <file>] [options]
       tally serve --hash-token <token|-> [--role <role>] [--agent <id>]... [--signer <0x…>] [--name <name>]
       tally serve --new-token --role <role> [--agent <id>]... [--signer <0x…>] [--name <name>] [--json]

Serves session/open, session/frame, session/turn, session/events,
session/describe and session/finalize as JSON-RPC 2.0 at POST /rpc, and
GET /sessions/<id>/{describe,events,bundle,receipt,proof} for graders, and the
grader's desk (the audit page that verifies a day in the browser) at GET /.
Every route but GET /healthz, GET /readyz and GET / needs "Authorization: Bearer <token>".
Prints "tally serve: listening on http://<host>:<port>" on stdout when ready;
logs JSON lines to stderr. SIGTERM or SIGINT finishes in-flight requests, then
exits 0 (a second signal cuts open connections).

Signing (optional):
  --key <file>           engine key: finalize returns a signed checkpoint, and
                         GET /sessions/<id>/{checkpoint,turn-receipt,consistency,
                         log-proof (with --log-key)},
                         each session's C2SP tlog-tiles under /sessions/<id>/tiles
                         (token as for its bundle; the latest signed checkpoint)
                         and /verifier-key are served (default: $TALLY_KEY when
                         set); it must exist ('tally key new' creates it):
                         a missing file is refused, exit 3
  --engine-name <name>   the name the key must carry (default $TALLY_ENGINE_NAME)
  --witness-policy <f>   with --key (or --log-key): a witness policy (Sigsum format, docs/PROTOCOL.md
                         §12); every checkpoint the engine signs is submitted to
                         each witness line with a URL, and the checkpoints, turn
                         receipts and consistency proofs served carry the
                         cosignatures collected (a down witness never blocks)
${SERVE_LOG_HELP}
Judge (mandates with semantic rules; without one their intents are denied):
${judgeHelp(22)}
Store:
  --db <location>        SQLite path (default $TALLY_DB or ${'.tally/tally.db'}),
                         postgres://… (several servers may share one database), or memory:
Tokens (required; the file holds only SHA-256 hashes of tokens):
  --auth <file>          JSON auth config (else $TALLY_AUTH_FILE, else the JSON in $TALLY_TOKENS)
  --hash-token <t|->     print the config entry for token t ('-' reads it from stdin) and exit
  --new-token            make a random token, print it and its config entry, and exit
  --json                 with --new-token/--hash-token: one line {"ok", "token", "entry"};
                         serving: {"ok", "listening"} instead of the listening line;
                         errors as {"ok":false, "code", "message", "exit"}
  --role <role>          runtime | agent | auditor (with --hash-token/--new-token; default runtime)
  --agent <id>           an agent id the agent token speaks for (repeatable)
  --signer <0x…>         the agent token's key: it speaks for its agents only where spec.agents maps them to it
  --name <name>          the token's name in logs
Listening and limits:
  --port <n>             TCP port (default 8787; 0 picks a free one)
  --host <addr>          address to bind (default 127.0.0.1)
  --max-body <bytes>     largest request body (default ${DEFAULT_LIMITS.maxBodyBytes}) → 413
  --max-depth <n>        deepest JSON nesting (default ${DEFAULT_LIMITS.maxDepth}) → 400
  --max-batch <n>        most calls in one JSON-RPC batch (default ${DEFAULT_LIMITS.maxBatch})
  --rate <n>             requests per second per token (default ${DEFAULT_LIMITS.rate.perSecond}) → 429
  --burst <n>            bucket size per token (default ${DEFAULT_LIMITS.rate.burst})
${timeoutHelp()}
  --grace <ms>           how long a shutdown waits for in-flight requests (default 10000)
  --log-level <level>    fatal|error|warn|info|debug|silent (default info)
Observability (GET /healthz and GET /readyz need no token):
  --otel                 export traces and metrics over OTLP/HTTP (JSON), configured
                         by the standard OTEL_* variables (OTEL_EXPORTER_OTLP_ENDPOINT,
                         default http://localhost:4318; OTEL_SERVICE_NAME, default tally)
  --allow-async-replication
                         accept a PostgreSQL store whose standbys are all asynchronous
                         (else tally serve warns and /readyz fails while they are;
                         also $TALLY_ALLOW_ASYNC_REPLICATION=1)
  --metrics-bind <h:p>   also serve GET /metrics without a token on this address
                         (GET /metrics on the main port needs an auditor token)

Exit codes: 0 stopped by a signal after draining, 2 usage or auth config error, 3 store or port unavailable.`,
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    db: { type: 'string' },
    ...JUDGE_OPTIONS,
    auth: { type: 'string' },
    'hash-token': { type: 'string' },
    'new-token': { type: 'boolean' },
    role: { type: 'string' },
    agent: { type: 'string', multiple: true },
    signer: { type: 'string' },
    name: { type: 'string' },
    'max-body': { type: 'string' },
    'max-depth': { type: 'string' },
    'max-batch': { type: 'string' },
    rate: { type: 'string' },
    burst: { type: 'string' },
    ...TIMEOUT_OPTIONS,
    grace: { type: 'string' },
    key: { type: 'string' },
    'engine-name': { type: 'string' },
    'witness-policy': { type: 'string' },
    ...SERVE_LOG_OPTIONS,
    'log-level': { type: 'string' },
    otel: { type: 'boolean' },
    'metrics-bind': { type: 'string' },
    'allow-async-replication': { type: 'boolean' },
  },
  async run({ values, positionals }, io) {
    if (positionals.length > 0) throw new CliError("serve takes no positional arguments. Run 'tally serve --help'.");
    if (str(values, 'hash-token') !== undefined || values['new-token'] === true) return tokenLine(values, io);
    const judge = await judgeFromOptions(values, io);
    const { Authenticator, loadAuthConfig } = await import('../../server/auth.js');
    let auth: Authenticator;
    try {
      auth = new Authenticator(loadAuthConfig(str(values, 'auth'), io.env).config);
    } catch (e) {
      if (e instanceof TallyError) throw new CliError(e.details ? `${e.shortMessage} (${e.details})` : e.shortMessage, EXIT.usage, e.code);
      throw e;
    }
    const port = positiveInt(values, 'port', 0) ?? 8787;
    if (port > 65535) throw new CliError('--port must be from 0 to 65535');
    const host = str(values, 'host') ?? '127.0.0.1';
    const level = str(values, 'log-level') ?? 'info';
    if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(level)) throw new CliError('--log-level must be fatal, error, warn, info, debug, trace or silent');
    const limits: Partial<WireServerLimits> = {};
    const set = <K extends keyof WireServerLimits>(k: K, v: WireServerLimits[K] | undefined): void => {
      if (v !== undefined) (limits as Record<string, unknown>)[k] = v;
    };
    set('maxBodyBytes', positiveInt(values, 'max-body', 64));
    set('maxDepth', positiveInt(values, 'max-depth', 2));
    set('maxBatch', positiveInt(values, 'max-batch'));
    const timeouts = timeoutsFromOptions(values);
    set('headersTimeoutMs', timeouts.headersTimeoutMs);
    set('requestTimeoutMs', timeouts.requestTimeoutMs);
    const rate = positiveInt(values, 'rate');
    const burst = positiveInt(values, 'burst');
    if (rate !== undefined || burst !== undefined) set('rate', { perSecond: rate ?? DEFAULT_LIMITS.rate.perSecond, burst: burst ?? Math.max(rate ?? 0, DEFAULT_LIMITS.rate.burst) });
    const grace = positiveInt(values, 'grace', 0) ?? 10_000;
    const metricsBind = bindOf(str(values, 'metrics-bind'));
    const otel = values['otel'] === true;

    const [{ createLogger, flushLogSync }, { createWireServer }, { SessionTrees, createNotary }, { defaultStoreLocation, openStore }, { createEngine }] = await Promise.all([
      import('../../server/log.js'),
      import('../../server/http.js'),
      import('../../receipt/index.js'),
      import('../../store/index.js'),
      import('../../engine.js'),
    ]);
    const logger = createLogger({ level, base: { service: 'tally-serve' } });
    const telemetry = await startServeTelemetry(otel, io.env, logger);
    if (metricsBind && !telemetry) {
      const { sdkInstallLine } = await import('../../telemetry/sdk.js');
      throw new CliError(`--metrics-bind needs the optional OpenTelemetry SDK packages; in your project run: ${sdkInstallLine(false)}`, EXIT.usage, 'TALLY_TELEMETRY_MISSING');
    }
    const keyPath = str(values, 'key') ?? (io.env['TALLY_KEY'] || undefined);
    const trees = new SessionTrees();
    let notary: Notary | undefined;
    let witnessConflicts: (() => readonly import('../../witness/index.js').WitnessConflict[]) | undefined;
    if (keyPath !== undefined) {
      const name = str(values, 'engine-name');
      const { engineKeyFor } = await import('./checkpoint.js');
      notary = createNotary({ key: await engineKeyFor({ key: keyPath, ...(name === undefined ? {} : { name }) }, io), trees });
    }
    const policyPath = str(values, 'witness-policy');
    let logWitnesses: import('../../witness/index.js').EngineWitness[] = [];
    const sessionsWitnessed = witnessSessions(values, io);
    if (policyPath !== undefined) {
      // With the engine log on, witnesses cosign the log (its own key); session checkpoints (the engine key's) only with --witness-sessions.
      if (notary === undefined && sessionsWitnessed) throw new CliError(`--witness-policy needs --key${logKeyPath(values, io) === undefined ? ' (or --log-key: witnesses then cosign the engine log)' : ' with --witness-sessions'}: witnesses cosign the checkpoints the engine key signs`);
      const { readTextFile } = await import('./checkpoint.js');
      const { parseWitnessPolicy, createWitnessedNotary } = await import('../../witness/index.js');
      const parsed = parseWitnessPolicy(readTextFile(policyPath, io, 'the witness policy'));
      if (!parsed.ok) throw new CliError(`--witness-policy ${policyPath}: ${parsed.message}`);
      const witnesses = parsed.policy.witnesses.flatMap((w) => (w.url === undefined ? [] : [{ url: w.url, verifier: w.verifier }]));
      if (witnesses.length === 0) throw new CliError(`--witness-policy ${policyPath}: no witness line has a URL to submit to`);
      logWitnesses = witnesses;
      // Every witness answer saying the store lost what it cosigned: an error line each, and /readyz fails from then on.
      const onConflict = (c: import('../../witness/index.js').WitnessConflict): void =>
        logger.error({ event: 'witness-conflict', witness: c.witness, origin: c.origin, reason: c.reason, witnessSize: c.witnessSize, storeSize: c.storeSize, detail: c.message }, 'a witness holds a history the store lost: signing refused for this session');
      if (sessionsWitnessed && notary !== undefined) {
        const witnessed = createWitnessedNotary({ notary, witnesses, policy: parsed.policy, onConflict });
        witnessConflicts = () => witnessed.conflicts();
        notary = witnessed;
      }
    }
    // A server that cannot listen creates and migrates nothing: the ports are tried before the store opens.
    const { probeListen } = await import('../listen.js');
    await probeListen(port, host);
    if (metricsBind) await probeListen(metricsBind.port, metricsBind.host, ' for metrics');
    const store = await openStore(str(values, 'db') ?? defaultStoreLocation(io.env));
    let tiles = await engineLogRoutes(values, io, store);
    // With the engine log, what witnesses cosign is the log (docs/PROTOCOL.md §15.6).
    let cosigning: LogCosigning | undefined;
    if (tiles && logWitnesses.length > 0) {
      cosigning = await startLogCosigning(values, tiles, logWitnesses, store, logger);
      tiles = cosigning.routes;
    }
    const { checkReadiness, replicationCheck } = await import('../../server/ready.js');
    const allowAsyncReplication = values['allow-async-replication'] === true || io.env['TALLY_ALLOW_ASYNC_REPLICATION'] === '1';
    // Said once at start, and again by every /readyz while it lasts.
    const replication = await replicationCheck(store, allowAsyncReplication);
    if (replication.state === 'failed') logger.warn({ event: 'replication', check: 'replication', reason: replication.reason }, 'standbys exist but none is synchronous');
    else if (replication.detail !== undefined) logger.info({ event: 'replication', detail: replication.detail }, 'replication');
    // A signing server on a store that moved (failover, restored copy) without proof says so at start; every signature then refuses.
    const { hasContinuity } = await import('../../store/index.js');
    if (notary !== undefined && hasContinuity(store)) {
      const { judgeContinuity } = await import('../../receipt/index.js');
      const verdict = await store.continuityState().then(judgeContinuity, () => undefined);
      if (verdict !== undefined && !verdict.ok) logger.error({ event: 'continuity', code: 'TALLY_SIGN_TIMELINE_CHANGED', reason: verdict.message }, 'the engine refuses to sign on this store until an operator acknowledges it');
    }
    // The grader's desk at GET / (src/web): absent only when the package was not built.
    const { loadAuditPage } = await import('../../web/index.js');
    let page: { html: string; csp: string } | undefined;
    try {
      page = loadAuditPage();
    } catch {
      page = undefined;
    }
    const server = createWireServer({
      engine: createEngine({ store, ruler: await cliRuler(store, judge) }),
      auth,
      logger,
      limits,
      trees,
      readiness: () => checkReadiness({ store, allowAsyncReplication, signs: notary !== undefined || logKeyPath(values, io) !== undefined, ...(keyPath === undefined ? {} : { keyPath }), ...(witnessConflicts === undefined ? {} : { witnessConflicts }) }),
      ...(notary ? { notary } : {}),
      ...(telemetry ? { metrics: () => telemetry.prometheus() } : {}),
      ...(page ? { page } : {}),
      ...(tiles ? { tiles } : {}),
    });
    // Signal handlers go in BEFORE the "listening" line: a signal that arrives as soon as
    // a supervisor reads it must find them. First signal: drain and stop; any later: cut.
    let signalled: NodeJS.Signals | undefined;
    let wake: () => void = () => {};
    const onSignal = (sig: NodeJS.Signals): void => {
      if (signalled !== undefined) return server.forceClose();
      signalled = sig;
      wake();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    // Started by `npx tally serve &`, `kill $!` reaches only npm: stop with it (src/cli/launcher.ts).
    const unwatch = watchLauncher(io.env, () => onSignal('SIGTERM'));
    let metricsServer: import('node:http').Server | undefined;
    try {
      let address;
      try {
        address = await server.listen(port, host);
      } catch (e) {
        throw new CliError(`cannot listen on ${host}:${port}: ${(e as Error).message}`, EXIT.io, 'TALLY_CLI_IO');
      }
      logger.info({ event: 'listening', url: address.url, store: store.name, tokens: auth.size, limits: server.limits, ...(notary ? { verifierKey: notary.verifierKey } : {}) }, 'listening');
      if (metricsBind && telemetry) {
        const { listenMetrics } = await import('../../server/metrics-http.js');
        try {
          const metrics = await listenMetrics(() => telemetry.prometheus(), metricsBind.port, metricsBind.host);
          metricsServer = metrics.server;
          logger.info({ event: 'metrics-listening', url: `${metrics.url}/metrics` }, 'metrics listening');
        } catch (e) {
          throw new CliError(`cannot listen on ${metricsBind.host}:${metricsBind.port} for metrics: ${(e as Error).message}`, EXIT.io, 'TALLY_CLI_IO');
        }
      }
      // Lines are written asynchronously: the ones above reach stderr before stdout says the server is up.
      flushLogSync(logger);
      println(io.stdout, jsonMode(values) ? JSON.stringify({ ok: true, listening: address.url }) : `tally serve: listening on ${address.url}`);
      if (signalled === undefined) await new Promise<void>((resolve) => (wake = resolve));
      logger.info({ event: 'shutdown', signal: signalled, inFlight: server.inFlight }, 'shutting down: finishing in-flight requests');
      await server.close(grace);
    } finally {
      unwatch();
      cosigning?.stop();
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      metricsServer?.close();
      await store.close().catch(() => {});
      await telemetry?.shutdown();
    }
    logger.info({ event: 'stopped' }, 'stopped');
    return EXIT.ok;
  },
};
