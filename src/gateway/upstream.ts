/**
 * The gateway's one upstream MCP server: a child process on stdio (or, through
 * the SDK's client transport, a Streamable HTTP URL), spoken to as JSON-RPC
 * messages. Every request ends in exactly one {@link UpstreamOutcome}: the
 * server's result or error, or what happened instead — no answer in time,
 * the server gone mid-call, a malformed message, a result over the bound —
 * so the gateway can record it as a frame and answer the agent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { LineReader } from './lines.js';

/** How one upstream request ended. */
export type UpstreamOutcome =
  | { readonly kind: 'result'; readonly result: Record<string, unknown> }
  | { readonly kind: 'error'; readonly error: Record<string, unknown> }
  /** The call may or may not have run: no answer within the timeout, the server exited, or it sent a message that is not a JSON-RPC response. */
  | { readonly kind: 'unknown'; readonly reason: 'timeout' | 'crashed' | 'malformed' | 'unreachable'; readonly detail: string }
  | { readonly kind: 'too-large'; readonly bytes: number }
  /** Nothing was sent: the server had already exited. */
  | { readonly kind: 'unavailable'; readonly detail: string };

/** A message channel to an upstream server. */
export interface Channel {
  start(): Promise<void>;
  send(message: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
  onmessage?: (message: unknown, bytes: number) => void;
  onmalformed?: (detail: string) => void;
  onoversize?: (bytes: number) => void;
  onclose?: (detail: string) => void;
  /** A request could not be delivered (HTTP): the call's outcome is unknown. */
  onsendfailed?: (detail: string) => void;
}

/** An upstream started as a child process speaking MCP on stdio. It dies with the gateway. */
export class ChildChannel implements Channel {
  onmessage?: (message: unknown, bytes: number) => void;
  onmalformed?: (detail: string) => void;
  onoversize?: (bytes: number) => void;
  onclose?: (detail: string) => void;
  private child: ChildProcess | undefined;
  private readonly killOnExit = (): void => {
    this.child?.kill('SIGKILL');
  };

  constructor(
    private readonly command: string,
    private readonly args: readonly string[],
    private readonly maxLine: number,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.command, [...this.args], { stdio: ['pipe', 'pipe', 'inherit'], env: this.env });
      this.child = child;
      const reader = new LineReader(
        {
          value: (v, n) => this.onmessage?.(v, n),
          malformed: (code, snippet) => this.onmalformed?.(`not strict JSON (${code}): ${snippet.slice(0, 120)}`),
          oversize: (n) => this.onoversize?.(n),
        },
        this.maxLine,
      );
      child.stdout!.on('data', (c: Buffer) => reader.push(c));
      child.stdin!.on('error', () => {});
      child.once('error', (e) => reject(e));
      child.once('spawn', () => {
        process.once('exit', this.killOnExit);
        resolve();
      });
      child.once('exit', (code, signal) => {
        process.off('exit', this.killOnExit);
        this.onclose?.(signal ? `the upstream server was killed by ${signal}` : `the upstream server exited with code ${code}`);
      });
    });
  }

  send(message: Record<string, unknown>): Promise<void> {
    return new Promise((resolve) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) return resolve();
      if (stdin.write(JSON.stringify(message) + '\n')) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** Ends the child: stdin closed, then SIGTERM, then SIGKILL after a grace period. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((r) => child.once('exit', () => r()));
    child.stdin?.end();
    const term = setTimeout(() => child.kill('SIGTERM'), 500);
    const kill = setTimeout(() => child.kill('SIGKILL'), 2500);
    await gone;
    clearTimeout(term);
    clearTimeout(kill);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

interface Pending {
  readonly resolve: (o: UpstreamOutcome) => void;
  readonly timer: NodeJS.Timeout;
}

/** Requests and notifications over a {@link Channel}, one outcome per request. */
export class Upstream {
  private next = 1;
  private readonly pending = new Map<number, Pending>();
  private closed: string | undefined;
  /** Called on every notification the server sends (method, params). */
  onnotification?: (method: string, params: unknown) => void;

  constructor(
    private readonly channel: Channel,
    private readonly maxResultBytes: number,
  ) {
    channel.onmessage = (m, n) => this.receive(m, n);
    channel.onmalformed = (detail) => this.failAll({ kind: 'unknown', reason: 'malformed', detail });
    channel.onoversize = (bytes) => this.failAll({ kind: 'too-large', bytes });
    channel.onsendfailed = (detail) => this.failAll({ kind: 'unknown', reason: 'unreachable', detail });
    channel.onclose = (detail) => {
      this.closed = detail;
      this.failAll({ kind: 'unknown', reason: 'crashed', detail });
    };
  }

  /** Why the server is gone, or `undefined` while it runs. */
  get down(): string | undefined {
    return this.closed;
  }

  start(): Promise<void> {
    return this.channel.start();
  }

  close(): Promise<void> {
    return this.channel.close();
  }

  notify(method: string, params?: Record<string, unknown>): Promise<void> {
    return this.channel.send({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });
  }

  /** Sends one request; resolves with how it ended (never rejects). */
  async request(method: string, params: Record<string, unknown> | undefined, timeoutMs: number): Promise<UpstreamOutcome> {
    if (this.closed !== undefined) return { kind: 'unavailable', detail: this.closed };
    const id = this.next++;
    const done = new Promise<UpstreamOutcome>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        // MCP: tell the server we stopped waiting (it may still have acted).
        void this.notify('notifications/cancelled', { requestId: id, reason: 'timeout' });
        resolve({ kind: 'unknown', reason: 'timeout', detail: `no answer within ${timeoutMs} ms` });
      }, timeoutMs);
      this.pending.set(id, { resolve, timer });
    });
    await this.channel.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    return done;
  }

  private settle(id: number, o: UpstreamOutcome): void {
    const p = this.pending.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(id);
    p.resolve(o);
  }

  /** A failure no id can be read from: the gateway has at most one call in flight, so it is that call's. */
  private failAll(o: UpstreamOutcome): void {
    for (const id of [...this.pending.keys()]) this.settle(id, o);
  }

  private receive(m: unknown, bytes: number): void {
    if (!isObject(m) || m['jsonrpc'] !== '2.0') return this.failAll({ kind: 'unknown', reason: 'malformed', detail: 'a message that is not JSON-RPC 2.0' });
    const method = m['method'];
    if (typeof method === 'string') {
      if (m['id'] === undefined) {
        this.onnotification?.(method, m['params']);
        return;
      }
      // A request from the server: the gateway offers no client capabilities.
      const answer = method === 'ping' ? { result: {} } : { error: { code: -32601, message: `the Tally gateway does not serve ${method.slice(0, 64)}` } };
      void this.channel.send({ jsonrpc: '2.0', id: m['id'], ...answer });
      return;
    }
    const id = m['id'];
    if (typeof id !== 'number' || !this.pending.has(id)) {
      if (this.pending.size > 0 && (typeof id !== 'number' || id >= this.next)) this.failAll({ kind: 'unknown', reason: 'malformed', detail: `a response to id ${JSON.stringify(id)?.slice(0, 40)}, which was never asked` });
      return;
    }
    const hasResult = Object.hasOwn(m, 'result');
    const hasError = Object.hasOwn(m, 'error');
    if (hasResult === hasError) return this.settle(id, { kind: 'unknown', reason: 'malformed', detail: 'a response with both or neither of result and error' });
    if (bytes > this.maxResultBytes) return this.settle(id, { kind: 'too-large', bytes });
    if (hasResult) {
      const r = m['result'];
      return this.settle(id, isObject(r) ? { kind: 'result', result: r } : { kind: 'unknown', reason: 'malformed', detail: 'a result that is not an object' });
    }
    const e = m['error'];
    if (!isObject(e) || typeof e['code'] !== 'number' || !Number.isSafeInteger(e['code']) || typeof e['message'] !== 'string') return this.settle(id, { kind: 'unknown', reason: 'malformed', detail: 'an error that is not {code, message}' });
    this.settle(id, { kind: 'error', error: e });
  }
}
