/**
 * `tally mcp proxy`: the MCP gateway (src/gateway) as a command. The agent
 * speaks MCP to it on stdio; it starts the upstream server (`-- <command…>`)
 * as its child, records the day in the store and seals it when the agent
 * closes stdin or on SIGTERM/SIGINT. stdout carries only MCP; the session id
 * and the receipt go to stderr (and `--receipt <file>`).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { CliError, EXIT, println, str, type CommandIO } from '../command.js';
import { upstreamArgs, upstreamLabel } from './mcp-upstreams.js';
import { judgeFromOptions, judgeHelp } from './judge-option.js';

export const PROXY_HELP = `Usage: tally mcp proxy [--db <location>] [--mandate <spec.json>] [--timeout-ms <n>]
                       [--max-result-bytes <n>] [--receipt <file>] [--listen <host:port>]
                       [--judge <url> (--judge-signature-header <name> | --judge-key <file>) …]
                       (-- <upstream command…> | --upstream-url <url> |
                        --upstream <name>=<command…> … --upstream-url <name>=<url> …)

Starts <upstream command…> as a child MCP server on stdio and serves its tools
to the agent on this process's stdin/stdout, recording the day in the store:
the OPEN frame holds the server's initialize result and tools/list; each
tools/call is one turn (its canonical request bytes), ruled by the referee
BEFORE anything goes upstream; the result, error, timeout (UNKNOWN) or crash
is the next frame. A refused call is answered isError naming the ruling code
and what to do, and is never sent. A retried call (same id, same bytes) is
answered from the record. The day is sealed when the agent closes stdin or
on SIGTERM/SIGINT; the child dies with the proxy. Export it with
'tally export --session <id>', then 'tally verify' / 'tally replay'.

Options:
  --db <location>         SQLite path, postgres://… or memory: (default $TALLY_DB
                          or .tally/tally.db)
  --mandate <spec.json>   the day's whole session spec, signed by its principal
                          ('tally mandate sign'), with "mcp": {} and a mandate
                          whose "tools" section allows tools (docs/PROTOCOL.md §18);
                          without it every offered tool is admitted (and recorded)
  --timeout-ms <n>        upstream call timeout; its outcome is then UNKNOWN
                          (default 30000; starting an upstream, its initialize
                          and first tools/list, may take up to 30000 or this,
                          whichever is larger)
  --max-result-bytes <n>  largest upstream message passed on (default 262144)
  --receipt <file>        also write the receipt JSON here when sealed
  --upstream-url <url>    the upstream is a Streamable HTTP MCP server at <url>
                          (instead of a command)
  --upstream <name>=<command…>, --upstream-url <name>=<url>
                          named upstreams, each repeatable, any mix: the agent
                          sees tool t of upstream <name> as <name>__<t> (name:
                          1-32 of a-z, 0-9, -); the command is split at spaces,
                          '…' and "…" group (docs/PROTOCOL.md §18.6)
  --listen <host:port>    serve the agent on Streamable HTTP at
                          http://<host:port>/mcp instead of stdio (one agent
                          session per day; port 0 picks one; the URL is printed
                          to stderr); sealed when the agent ends its session
                          (HTTP DELETE) or on SIGTERM/SIGINT
${judgeHelp(24)}
  Each call of a tool whose mandate rule has rules and judges is put to the
  judge before anything goes upstream; without a valid answer in time it is
  refused (judge_unavailable) and never sent.

Exit codes: 0 sealed, 1 the upstream did not start or the day could not be
opened, 2 usage error, 3 store unavailable.`;

function positiveInt(v: string | undefined, name: string, fallback: number, max: number): number {
  if (v === undefined) return fallback;
  if (!/^[1-9][0-9]{0,9}$/.test(v) || Number(v) > max) throw new CliError(`--${name} must be an integer from 1 to ${max}`);
  return Number(v);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Runs the proxy; `command` is everything after `--`. */
export async function runProxy(values: Record<string, string | boolean | (string | boolean)[] | undefined>, command: string[], io: CommandIO): Promise<number> {
  const ups = upstreamArgs(values, command);
  const listen = str(values, 'listen');
  const hp = listen === undefined ? undefined : /^(.+):([0-9]{1,5})$/.exec(listen);
  if (listen !== undefined && (!hp || Number(hp[2]) > 65535)) throw new CliError('--listen must be <host>:<port>, e.g. 127.0.0.1:8787 (port 0 picks a free one)');
  for (const k of ['url', 'token-file', 'retries', 'key']) if (values[k] !== undefined) throw new CliError(`--${k} is not an option of tally mcp proxy`);
  const timeoutMs = positiveInt(str(values, 'timeout-ms'), 'timeout-ms', 30_000, 3_600_000);
  const maxResultBytes = positiveInt(str(values, 'max-result-bytes'), 'max-result-bytes', 262_144, 900_000);
  const judge = await judgeFromOptions(values, io);
  const judgeTimeout = str(values, 'judge-timeout');
  const judgeTimeoutMs = judgeTimeout === undefined ? undefined : Number(judgeTimeout);
  let spec: Record<string, unknown>;
  const mandateFile = str(values, 'mandate');
  if (mandateFile !== undefined) {
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(mandateFile, 'utf8'));
    } catch (e) {
      throw new CliError(`cannot read the spec ${mandateFile}: ${(e as Error).message}`, EXIT.io, 'TALLY_CLI_IO');
    }
    if (!isObject(doc) || !isObject(doc['mcp'])) throw new CliError(`${mandateFile} must be a whole session spec with an "mcp" object (a gateway day), signed with 'tally mandate sign'`);
    spec = doc;
  } else {
    spec = { name: 'mcp-proxy', mcp: { upstream: upstreamLabel(ups), run: `${new Date().toISOString()}/${randomBytes(8).toString('hex')}` } };
  }
  const [{ defaultStoreLocation, openStore }, { Engine }, { createRefereeRuler }, gw] = await Promise.all([
    import('../../store/index.js'),
    import('../../session/index.js'),
    import('../../referee/ruler.js'),
    import('../../gateway/index.js'),
  ]);
  let store;
  try {
    store = await openStore(str(values, 'db') ?? defaultStoreLocation(io.env));
  } catch (e) {
    throw new CliError(`cannot open the store: ${(e as Error).message}`, EXIT.io, 'TALLY_CLI_IO');
  }
  const engine = new Engine({ store, ruler: createRefereeRuler({ store, ...(judge === undefined ? {} : { judge }), ...(judgeTimeoutMs === undefined ? {} : { judgeTimeoutMs }) }) });
  const named = ups.map((u) => ({ name: u.name ?? '', upstream: new gw.Upstream(u.kind === 'url' ? new gw.HttpChannel(u.url) : new gw.ChildChannel(u.argv[0]!, u.argv.slice(1), maxResultBytes), maxResultBytes) }));
  const closeUpstreams = async (): Promise<void> => {
    await Promise.all(named.map((u) => u.upstream.close()));
  };
  const which = ups[0]!.name === undefined ? { upstream: named[0]!.upstream } : { upstreams: named };
  const gateway = new gw.Gateway({ engine, ...which, spec: spec as never, timeoutMs, clientInfo: { name: 'tally-mcp-proxy', version: '1' } });
  try {
    const sid = await gateway.start();
    println(io.stderr, JSON.stringify({ event: 'recording', sessionId: sid }));
  } catch (e) {
    await closeUpstreams();
    await store.close();
    println(io.stderr, `tally mcp proxy: ${(e as Error).message}`);
    return EXIT.invalid;
  }
  let failure: unknown;
  let reason: 'agent-disconnected' | 'signal' = 'agent-disconnected';
  const onError = (e: unknown): void => {
    failure ??= e;
    println(io.stderr, `tally mcp proxy: ${(e as Error).message}`);
  };
  let served: Promise<void>;
  let stopHttp: () => Promise<void> = async () => {};
  if (hp) {
    let side;
    try {
      side = await gw.serveHttp(gateway, hp[1]!.replace(/^\[(.*)\]$/, '$1'), Number(hp[2]), onError);
    } catch (e) {
      await closeUpstreams();
      await store.close();
      throw new CliError(`cannot listen on ${listen}: ${(e as Error).message}`, EXIT.io, 'TALLY_CLI_IO');
    }
    println(io.stderr, JSON.stringify({ event: 'listening', url: side.url }));
    served = side.ended;
    stopHttp = () => side.close();
  } else {
    served = gw.serveStdio(gateway, process.stdin, process.stdout, onError);
  }
  const signalled = new Promise<void>((resolve) => {
    const on = (): void => {
      reason = 'signal';
      resolve();
    };
    process.once('SIGTERM', on);
    process.once('SIGINT', on);
  });
  await Promise.race([served, signalled]);
  process.stdin.pause();
  let code: number = EXIT.ok;
  try {
    const receipt = await gateway.finish(reason);
    println(io.stderr, JSON.stringify({ event: 'sealed', reason, ...receipt, turns: gateway.counts.turns, upstreamCalls: gateway.counts.upstreamCalls }));
    const file = str(values, 'receipt');
    if (file !== undefined) writeFileSync(file, JSON.stringify(receipt, null, 2) + '\n');
  } catch (e) {
    println(io.stderr, `tally mcp proxy: the day could not be sealed: ${(e as Error).message}`);
    code = EXIT.invalid;
  }
  await stopHttp();
  await closeUpstreams();
  await store.close();
  if (failure !== undefined && code === EXIT.ok) code = EXIT.invalid;
  return code;
}
