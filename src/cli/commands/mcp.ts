// The MCP SDK, the server and the client load only when `tally mcp` runs (other commands start faster).
import { readFileSync } from 'node:fs';
import type { TallyClient } from '../../client/index.js';
import type { BackendFailure, McpBackend } from '../../server/mcp/index.js';
import { CliError, EXIT, str, type Command } from '../command.js';
import { PROXY_HELP } from './mcp-proxy.js';
import { JUDGE_OPTIONS } from './judge-option.js';

function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

function failureOf(e: unknown): BackendFailure {
  const w = e as { name?: unknown; type?: unknown; shortMessage?: unknown; data?: Readonly<Record<string, unknown>> };
  if (w && w.name === 'WireError' && typeof w.type === 'string' && typeof w.shortMessage === 'string') {
    return { type: w.type, message: w.shortMessage, ...(w.data === undefined ? {} : { data: w.data }) } as BackendFailure;
  }
  return { type: 'network', message: (e as Error)?.message ?? String(e) };
}

/** The tools' backend over a remote `tally serve` (the server enforces the token's role). */
function remoteBackend(client: TallyClient): McpBackend {
  return {
    async call(method, params) {
      try {
        const out = await client.call(method, params);
        return out.ok ? out : { ok: false, failure: out.failure };
      } catch (e) {
        return { ok: false, failure: failureOf(e) };
      }
    },
    async bundle(sessionId) {
      const gen = client.bundle(sessionId);
      try {
        const first = await gen.next();
        const chunks = (async function* () {
          if (!first.done) yield first.value;
          yield* gen;
        })();
        return { ok: true, chunks };
      } catch (e) {
        return { ok: false, failure: failureOf(e) };
      }
    },
  };
}

export const mcpCommand: Command = {
  name: 'mcp',
  summary: 'Serve the wire verbs (and verify) as Model Context Protocol tools on stdio.',
  help: `Usage: tally mcp [--db <location>] [--key <file>] [--log-level <level>]
       tally mcp --url <http://host:port> [--token-file <file>]    (token from $TALLY_TOKEN otherwise)

Speaks MCP on stdin/stdout (nothing else is ever written to stdout; logs go to
stderr as JSON lines). Tools: session_open, session_frame, session_turn,
session_events, session_describe, session_finalize and verify. Every refusal,
including arguments that fail the input schema, is a tool result with
isError: true and structuredContent.error {type, code, message, retryable, advice}.

Local (default): the tools write to the store at --db (default $TALLY_DB or
.tally/tally.db) with the intent ruler on; stdio has no network peer, so the
caller has the operator's rights.
Remote (--url): the tools call a running 'tally serve' with a bearer token,
which that server authorizes (an agent token can only answer for its agents).

Options:
  --db <location>       SQLite path, postgres://… or memory: (local mode)
  --key <file>          engine key (local mode): session_finalize also returns the
                        checkpoint signed with it (default $TALLY_KEY when set)
  --url <url>           base URL of a 'tally serve' (remote mode)
  --token-file <file>   file holding the bearer token (remote mode; else $TALLY_TOKEN)
  --retries <n>         retries of a call that got no answer or a 5xx (remote mode; default 5)
  --log-level <level>   fatal|error|warn|info|debug|silent (default info)
  --json                a start-up error is one line {"ok":false, "code", "message", "exit"}
                        on stdout (before any MCP message; the process then exits)

Exit codes: 0 after the client closes stdin, 1 the server refused the token (checked at
start, remote mode), 2 usage error, 3 store unavailable.

The MCP gateway (record and referee another MCP server's tool calls):

${PROXY_HELP}`,
  options: {
    db: { type: 'string' },
    key: { type: 'string' },
    url: { type: 'string' },
    'token-file': { type: 'string' },
    retries: { type: 'string' },
    'log-level': { type: 'string' },
    mandate: { type: 'string' },
    'timeout-ms': { type: 'string' },
    'max-result-bytes': { type: 'string' },
    receipt: { type: 'string' },
    'upstream-url': { type: 'string', multiple: true },
    upstream: { type: 'string', multiple: true },
    listen: { type: 'string' },
    ...JUDGE_OPTIONS,
  },
  async run({ values, positionals }, io) {
    if (positionals[0] === 'proxy') return (await import('./mcp-proxy.js')).runProxy(values, positionals.slice(1), io);
    if (positionals.length > 0) throw new CliError("mcp takes no positional arguments (or: tally mcp proxy … -- <command>). Run 'tally mcp --help'.");
    for (const k of ['mandate', 'timeout-ms', 'max-result-bytes', 'receipt', 'upstream-url', 'upstream', 'listen', ...Object.keys(JUDGE_OPTIONS)]) if (values[k] !== undefined) throw new CliError(`--${k} is an option of 'tally mcp proxy'`);
    const level = str(values, 'log-level') ?? 'info';
    if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(level)) throw new CliError('--log-level must be fatal, error, warn, info, debug, trace or silent');
    const url = str(values, 'url');
    if (url !== undefined && (str(values, 'db') !== undefined || str(values, 'key') !== undefined)) throw new CliError('use either --db/--key (local) or --url (remote)');
    const [{ createLogger }, { createMcpServer, localBackend, StrictStdioServerTransport }] = await Promise.all([
      import('../../server/log.js'),
      import('../../server/mcp/index.js'),
    ]);
    const logger = createLogger({ level, base: { service: 'tally-mcp' } });
    let backend: McpBackend;
    let close: () => Promise<void> = async () => {};
    if (url !== undefined) {
      const file = str(values, 'token-file');
      let token: string | undefined;
      if (file !== undefined) {
        try {
          token = readFileSync(file, 'utf8').trim();
        } catch (e) {
          throw new CliError(`cannot read ${file}: ${(e as Error).message}`, EXIT.io, 'TALLY_CLI_IO');
        }
      } else token = io.env['TALLY_TOKEN'];
      if (!token) throw new CliError('remote mode needs a token: --token-file <file> or $TALLY_TOKEN');
      const { createClient } = await import('../../client/index.js');
      let client: TallyClient;
      try {
        const retries = str(values, 'retries');
        if (retries !== undefined && !/^[0-9]{1,2}$/.test(retries)) throw new CliError('--retries must be an integer from 0 to 99');
        client = createClient({ url, token, ...(retries === undefined ? {} : { retry: { retries: Number(retries) } }) });
      } catch (e) {
        if (e instanceof CliError) throw e;
        throw new CliError((e as Error).message);
      }
      // A bad token fails now, with its reason, not on every tool call later: one authenticated GET
      // without retries (a server that is not up yet is only warned about: calls retry as usual).
      const { WireError } = await import('../../client/index.js');
      try {
        await createClient({ url, token, retry: { retries: 0 }, timeoutMs: 10_000 }).verifierKey();
      } catch (e) {
        if (e instanceof WireError && (e.type === 'unauthorized' || e.type === 'forbidden')) {
          throw new CliError(`${client.url} refused the token (${e.type}): ${e.message}. Check --token-file / $TALLY_TOKEN`, EXIT.invalid, `TALLY_CLI_${e.type.toUpperCase()}`);
        }
        if (!(e instanceof WireError) || e.type === 'network') logger.warn({ event: 'start-probe', url: client.url, error: (e as Error).message }, 'tally mcp: the server did not answer at start; calls will retry');
      }
      backend = remoteBackend(client);
      logger.info({ event: 'start', mode: 'remote', url: client.url }, 'tally mcp: remote');
    } else {
      const [{ defaultStoreLocation, openStore }, { createEngine }, { WireService }, { createNotary }] = await Promise.all([
        import('../../store/index.js'),
        import('../../engine.js'),
        import('../../server/service.js'),
        import('../../receipt/index.js'),
      ]);
      const keyPath = str(values, 'key') ?? (io.env['TALLY_KEY'] || undefined);
      const { engineKeyFor } = await import('./checkpoint.js');
      const notary = keyPath === undefined ? undefined : createNotary({ key: await engineKeyFor({ key: keyPath }, io) });
      const store = await openStore(str(values, 'db') ?? defaultStoreLocation(io.env));
      backend = localBackend(new WireService(createEngine({ store }), notary ? { notary } : {}));
      close = () => store.close();
      logger.info({ event: 'start', mode: 'local', store: store.name }, 'tally mcp: local');
    }
    const mcp = createMcpServer(backend, {
      name: 'tally',
      version: version(),
      onCall: (info) => logger.info(info, 'tool'),
    });
    // Every line through the one strict parser (duplicate keys, lone surrogates: -32700).
    const transport = new StrictStdioServerTransport();
    const closed = new Promise<void>((resolve) => {
      mcp.server.onclose = () => resolve();
    });
    const stop = (): void => void mcp.close();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    process.stdin.once('end', stop);
    await mcp.connect(transport);
    await closed;
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    await close();
    logger.info({ event: 'stopped' }, 'tally mcp: stopped');
    return EXIT.ok;
  },
};
