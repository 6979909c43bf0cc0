/**
 * The MCP gateway: the runtime of one Tally session in front of one or more
 * upstream MCP servers. It opens the day with each upstream's `initialize`
 * result and `tools/list` as the OPEN frame (several upstreams are named and
 * their tools offered as `<name>__<tool>`, src/gateway/servers.ts); each agent `tools/call` is one turn (its
 * canonical request bytes), ruled by the engine's referee before anything
 * goes upstream; what came back (or did not) is the next frame; the agent's
 * answer is read back from that frame. Calls are taken one at a time, in the
 * order they arrive, because a day alternates turn and frame.
 */
import { authoredHash, TallyError, toHex, type CanonicalObject, type SessionSpec } from '../protocol/index.js';
import { sha256 } from '../codec/sha256.js';
import type { Engine, Receipt } from '../session/index.js';
import type { ToolRuling } from '../referee/tool-ruler.js';
import { agentResponse, callBytes, resultFrameData, type CallOutcome } from './frames.js';
import { agentTools, changedData, checkUpstreamNames, openData, routeCall, type NamedUpstream, type ServerState } from './servers.js';
import type { Upstream } from './upstream.js';
import { traceToolCall, type ToolCallEnd } from '../telemetry/index.js';

/** Options of {@link Gateway}. */
export interface GatewayOptions {
  /** An engine whose ruler is the referee (it rules each call). */
  readonly engine: Engine;
  /** The one unnamed upstream (its tools keep their names) … */
  readonly upstream?: Upstream;
  /** … or one or more named upstreams (tools offered as `<name>__<tool>`, docs/PROTOCOL.md §18.6). */
  readonly upstreams?: readonly NamedUpstream[];
  /** The day's spec; it must have an `mcp` member. */
  readonly spec: SessionSpec;
  /** How long an upstream call may take before its outcome is recorded UNKNOWN (ms). */
  readonly timeoutMs: number;
  /** How long an upstream may take to answer `initialize` and its first `tools/list` (ms; default the larger of `timeoutMs` and 30 000: a server started by npx may first be downloaded). */
  readonly startTimeoutMs?: number;
  /** The frame clock (default `Date.now`); times never go backwards along the day. */
  readonly clock?: () => number;
  /** Identity the gateway gives itself upstream. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
}

/** Why a gateway day stopped (the `reason` of a {@link GatewayError}). */
export type GatewayFailure = 'upstream_init_failed' | 'session_exists' | 'engine_refused';

/** A gateway failure that stops the day (the store refused a write, the upstream would not initialize); `code` is `TALLY_GATEWAY_<REASON>`. */
export class GatewayError extends TallyError {
  constructor(
    readonly reason: GatewayFailure,
    message: string,
  ) {
    super(`TALLY_GATEWAY_${reason.toUpperCase()}`, message);
    this.name = 'GatewayError';
  }
}

const LATEST = '2025-11-25';
const decoder = new TextDecoder();

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

interface Pending {
  ordinal: number;
  entryHash: string;
  frameRoot: string;
}

/** One gateway day (see the module comment). */
export class Gateway {
  private readonly engine: Engine;
  private readonly servers: ServerState[];
  private readonly clock: () => number;
  private lastTime = 0;
  private sessionIdValue: string | undefined;
  private pending: Pending | undefined;
  /** The tools the agent sees (all upstreams', named by §18.6). */
  private tools: unknown[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  /** Request id (its JSON) → authored hash and the ordinal of the frame that answered it. */
  private readonly answered = new Map<string, { hash: string; frame: number }>();
  private sealed: Receipt | undefined;
  /** Why the gateway stopped recording (a store failure), once it has. */
  private broken: string | undefined;
  /** Counts: turns written, calls sent upstream. */
  readonly counts = { turns: 0, upstreamCalls: 0, retries: 0 };
  /** The agent learns of a changed tool list through this (set by the transport glue). */
  onToolsChanged?: () => void;

  constructor(private readonly options: GatewayOptions) {
    this.engine = options.engine;
    if ((options.upstream === undefined) === (options.upstreams === undefined)) throw new TypeError('give the gateway either upstream or upstreams');
    const named = options.upstreams ?? [];
    const bad = options.upstreams === undefined ? undefined : checkUpstreamNames(named);
    if (bad !== undefined) throw new RangeError(`upstreams: ${bad}`);
    const list: readonly { name: string | undefined; upstream: Upstream }[] = options.upstream !== undefined ? [{ name: undefined, upstream: options.upstream }] : named;
    this.servers = list.map((u) => ({ name: u.name, upstream: u.upstream, initialize: {}, tools: [], changed: false }));
    this.clock = options.clock ?? Date.now;
    for (const s of this.servers) {
      s.upstream.onnotification = (method) => {
        if (method === 'notifications/tools/list_changed') {
          s.changed = true;
          this.onToolsChanged?.();
        }
      };
    }
  }

  get sessionId(): string {
    if (this.sessionIdValue === undefined) throw new Error('the gateway has not started');
    return this.sessionIdValue;
  }

  private now(): number {
    this.lastTime = Math.max(this.lastTime, this.clock());
    return this.lastTime;
  }

  private async listTools(upstream: Upstream, timeoutMs = this.options.timeoutMs): Promise<unknown[]> {
    const tools: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const o = await upstream.request('tools/list', cursor === undefined ? {} : { cursor }, timeoutMs);
      if (o.kind !== 'result' || !Array.isArray(o.result['tools'])) throw new GatewayError('upstream_init_failed', `tools/list failed: ${JSON.stringify(o).slice(0, 300)}`);
      tools.push(...(o.result['tools'] as unknown[]));
      cursor = typeof o.result['nextCursor'] === 'string' ? o.result['nextCursor'] : undefined;
      if (cursor === undefined) break;
    }
    return tools;
  }

  /** Initializes one upstream and reads its tools. */
  private async startServer(s: ServerState): Promise<void> {
    const label = s.name === undefined ? 'the upstream' : `upstream "${s.name}"`;
    try {
      await s.upstream.start();
    } catch (e) {
      throw new GatewayError('upstream_init_failed', `${label} did not start: ${(e as Error).message}`);
    }
    const info = this.options.clientInfo ?? { name: 'tally-mcp-gateway', version: '1' };
    const startMs = this.options.startTimeoutMs ?? Math.max(this.options.timeoutMs, 30_000);
    const init = await s.upstream.request('initialize', { protocolVersion: LATEST, capabilities: {}, clientInfo: info }, startMs);
    if (init.kind !== 'result') throw new GatewayError('upstream_init_failed', `${label} did not initialize: ${JSON.stringify(init).slice(0, 300)}`);
    s.initialize = init.result;
    await s.upstream.notify('notifications/initialized');
    s.tools = await this.listTools(s.upstream, startMs);
  }

  /** Initializes the upstreams, opens the day and records the OPEN frame. */
  async start(): Promise<string> {
    const started = await Promise.allSettled(this.servers.map((s) => this.startServer(s)));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
    this.tools = agentTools(this.servers);
    const opened = await this.engine.open(this.options.spec);
    if (!opened.ok) throw new GatewayError('engine_refused', `the engine refused the spec: ${opened.message}`);
    if (!opened.created) throw new GatewayError('session_exists', `session ${opened.sessionId} already exists: a gateway day is recorded once (give a new spec, e.g. a new run id)`);
    this.sessionIdValue = opened.sessionId;
    const f = await this.engine.frame({ sessionId: opened.sessionId, ordinal: -1, time: this.now(), data: openData(this.servers) });
    if (!f.ok) throw new GatewayError('engine_refused', `the OPEN frame was refused: ${f.message}`);
    this.pending = { ordinal: -1, entryHash: f.entryHash, frameRoot: f.frameRoot };
    return opened.sessionId;
  }

  /** Runs `job` after every earlier one (the day is a line: turn, frame, turn, …). */
  private serial<T>(job: () => Promise<T>): Promise<T> {
    const run = this.queue.then(job, job);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The agent's JSON-RPC message → the response to send (or `undefined` for notifications and responses). */
  async handle(message: unknown): Promise<Record<string, unknown> | undefined> {
    if (!isObject(message)) return undefined;
    const method = message['method'];
    const id = message['id'];
    if (typeof method !== 'string') return undefined; // a response: the gateway sends the agent no requests
    if (id === undefined) return undefined; // notifications (initialized, cancelled, …)
    const reply = (result: unknown) => ({ jsonrpc: '2.0', id, result });
    switch (method) {
      case 'initialize':
        return reply(this.initializeAnswer());
      case 'ping':
        return reply({});
      case 'tools/list':
        return this.serial(async () => reply({ tools: this.tools }));
      case 'tools/call':
        return this.serial(() => this.call(message)).catch((e: unknown) => {
          // A write the store refused leaves the day's line broken here: record nothing more.
          this.broken ??= e instanceof Error ? e.message : String(e);
          throw e;
        });
      default:
        return { jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: the Tally gateway passes on tools only (${method.slice(0, 64)})` } };
    }
  }

  /** What the agent's `initialize` is answered: the one upstream's, or (named upstreams) the gateway's own, listing them. */
  private initializeAnswer(): Record<string, unknown> {
    const [one] = this.servers;
    if (this.servers.length === 1 && one!.name === undefined) {
      const r = one!.initialize;
      const capabilities = isObject(r['capabilities']) && isObject(r['capabilities']['tools']) ? { tools: r['capabilities']['tools'] } : { tools: {} };
      return { protocolVersion: r['protocolVersion'] ?? LATEST, capabilities, serverInfo: r['serverInfo'] ?? { name: 'upstream', version: '0' }, ...(typeof r['instructions'] === 'string' ? { instructions: r['instructions'] } : {}) };
    }
    const listChanged = this.servers.some((s) => isObject(s.initialize['capabilities']) && isObject(s.initialize['capabilities']['tools']) && s.initialize['capabilities']['tools']['listChanged'] === true);
    const names = this.servers.map((s) => `${s.name}__<tool> (${String((isObject(s.initialize['serverInfo']) && s.initialize['serverInfo']['name']) || 'unknown').slice(0, 80)})`);
    return { protocolVersion: LATEST, capabilities: { tools: listChanged ? { listChanged: true } : {} }, serverInfo: { name: 'tally-mcp-gateway', version: '1' }, instructions: `Tools of ${this.servers.length} upstream MCP servers, each named <server>__<tool>: ${names.join(', ')}.` };
  }

  private async readFrameData(ordinal: number): Promise<Record<string, unknown>> {
    const row = await this.engine.store.readSlot(this.sessionId, 'frame', ordinal);
    if (!row) throw new GatewayError('engine_refused', `frame ${ordinal} is not in the store`);
    const e = JSON.parse(decoder.decode(row.bytes)) as { data?: unknown };
    return isObject(e.data) ? e.data : {};
  }

  /** One `tools/call`: a turn, the referee's ruling, upstream only if admitted, the result frame. */
  private async call(message: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = message['id'] as string | number;
    if (this.sealed !== undefined || this.pending === undefined) return { jsonrpc: '2.0', id, error: { code: -32603, message: 'the gateway day is sealed; no further calls are recorded' } };
    if (this.broken !== undefined) return { jsonrpc: '2.0', id, error: { code: -32603, message: `the gateway stopped recording after a store failure (${this.broken.slice(0, 200)}); nothing was sent upstream` } };
    const bytes = callBytes(message);
    const hash = toHex(authoredHash(sha256, bytes));
    const key = JSON.stringify(id);
    const prior = this.answered.get(key);
    if (prior !== undefined && prior.hash === hash) {
      // A retry of the same request: answered from the record, never sent twice.
      this.counts.retries++;
      return agentResponse(id, await this.readFrameData(prior.frame));
    }
    const params = isObject(message['params']) ? message['params'] : {};
    const name = typeof params['name'] === 'string' ? params['name'] : undefined;
    const offered = name !== undefined && this.tools.some((t) => isObject(t) && t['name'] === name) ? name : undefined;
    return traceToolCall({ sessionId: this.sessionId, callId: id, tool: offered }, () => this.record(message, id, bytes, hash, key, prior));
  }

  /** The turn, the ruling, the upstream call if admitted, the result frame; the answer read back from it. */
  private async record(message: Record<string, unknown>, id: string | number, bytes: Uint8Array, hash: string, key: string, prior: { hash: string; frame: number } | undefined): Promise<{ value: Record<string, unknown>; end: ToolCallEnd }> {
    const p = this.pending!;
    const turn = await this.engine.turn({ sessionId: this.sessionId, ordinal: p.ordinal, parentHash: p.entryHash, frameRoot: p.frameRoot, body: { kind: 'authored', bytes } });
    if (!turn.ok) throw new GatewayError('engine_refused', `the turn was refused: ${turn.message}`);
    this.counts.turns++;
    const ruling = (turn.ruling as { tool?: ToolRuling } | undefined)?.tool;
    let outcome: CallOutcome;
    if (ruling === undefined) outcome = { kind: 'refused', code: 'tool_call_malformed', message: 'the engine gave no tool ruling (is its ruler the referee?)' };
    else if (!ruling.admitted) outcome = { kind: 'refused', code: ruling.code, message: ruling.message };
    else {
      // Routed by the name the referee admitted (it read the name from these very bytes): no second parse.
      const route = routeCall(this.servers, ruling.name);
      if (route === undefined) outcome = { kind: 'unavailable', detail: 'no upstream serves this tool name' };
      else {
        const params = message['params'] as Record<string, unknown>;
        this.counts.upstreamCalls++;
        outcome = await route.server.upstream.request('tools/call', route.server.name === undefined ? params : { ...params, name: route.tool }, this.options.timeoutMs);
      }
    }
    const ordinal = p.ordinal + 1;
    const data = resultFrameData(id, outcome, await this.rereadChanged());
    const f = await this.engine.frame({ sessionId: this.sessionId, ordinal, time: this.now(), data, parentHash: turn.entryHash });
    if (!f.ok) throw new GatewayError('engine_refused', `the result frame was refused: ${f.message}`);
    this.pending = { ordinal, entryHash: f.entryHash, frameRoot: f.frameRoot };
    if (prior === undefined) this.answered.set(key, { hash, frame: ordinal });
    const end: ToolCallEnd = { admitted: ruling?.admitted === true, code: ruling === undefined ? 'none' : ruling.admitted ? 'admitted' : ruling.code, outcome: outcome.kind };
    return { value: agentResponse(id, await this.readFrameData(ordinal)), end };
  }

  /** Re-reads the tool list of each upstream that announced `list_changed` (and still runs): the next frame's `tools`/`servers`. */
  private async rereadChanged(): Promise<CanonicalObject> {
    const reread: ServerState[] = [];
    for (const s of this.servers) {
      if (!s.changed || s.upstream.down !== undefined) continue;
      s.changed = false;
      try {
        s.tools = await this.listTools(s.upstream);
        reread.push(s);
      } catch {
        // the list could not be re-read: the recorded one stands
      }
    }
    if (reread.length > 0) this.tools = agentTools(this.servers);
    return changedData(this.servers, reread);
  }

  /** Ends the day: the closing turn answers the last frame, then the seal. Idempotent. */
  finish(reason: 'agent-disconnected' | 'signal' | 'upstream-exited'): Promise<Receipt> {
    return this.serial(async () => {
      if (this.sealed) return this.sealed;
      const p = this.pending!;
      const bytes = new TextEncoder().encode(JSON.stringify({ close: reason }));
      const t = await this.engine.turn({ sessionId: this.sessionId, ordinal: p.ordinal, parentHash: p.entryHash, frameRoot: p.frameRoot, body: { kind: 'authored', bytes } });
      if (!t.ok) throw new GatewayError('engine_refused', `the closing turn was refused: ${t.message}`);
      const fin = await this.engine.finalize(this.sessionId, { gateway: { turns: this.counts.turns, upstream_calls: this.counts.upstreamCalls } } as CanonicalObject);
      if (!fin.ok) throw new GatewayError('engine_refused', `finalize was refused: ${fin.message}`);
      this.sealed = fin.receipt;
      this.pending = undefined;
      return fin.receipt;
    });
  }
}
