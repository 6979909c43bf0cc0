/**
 * Streamable HTTP on both sides of the gateway, through the MCP SDK's own
 * transports: an upstream at a URL (`StreamableHTTPClientTransport`), and the
 * agent side served on `/mcp` (`StreamableHTTPServerTransport`, one MCP
 * session per gateway day — a day is one agent's). Agent bodies are read
 * bounded and parsed by the strict parser before the SDK sees them.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { readBody } from '../http/body.js';
import { parseStrictJson } from '../protocol/index.js';
import type { Gateway } from './gateway.js';
import type { Channel } from './upstream.js';
import { failureResponse, requestIdOf } from './frames.js';
import { SessionEvents } from '../server/mcp/events.js';

/** An upstream MCP server at a Streamable HTTP URL. */
export class HttpChannel implements Channel {
  onmessage?: (message: unknown, bytes: number) => void;
  onmalformed?: (detail: string) => void;
  onoversize?: (bytes: number) => void;
  onclose?: (detail: string) => void;
  onsendfailed?: (detail: string) => void;
  private readonly transport: StreamableHTTPClientTransport;

  constructor(url: URL) {
    this.transport = new StreamableHTTPClientTransport(url);
    this.transport.onmessage = (m) => {
      const r = m as unknown as Record<string, unknown>;
      // The negotiated version goes on every later request (MCP-Protocol-Version).
      if (isObject(r['result']) && typeof r['result']['protocolVersion'] === 'string' && isObject(r['result']['serverInfo'])) this.transport.setProtocolVersion(r['result']['protocolVersion']);
      this.onmessage?.(m, Buffer.byteLength(JSON.stringify(m)));
    };
    this.transport.onerror = (e) => this.onmalformed?.(e.message.slice(0, 300));
    this.transport.onclose = () => this.onclose?.('the upstream HTTP session closed');
  }

  start(): Promise<void> {
    return this.transport.start();
  }

  async send(message: Record<string, unknown>): Promise<void> {
    try {
      await this.transport.send(message as unknown as JSONRPCMessage);
    } catch (e) {
      // A refused POST (connection refused, 4xx/5xx) is the call's outcome, not a crash of the gateway.
      this.onsendfailed?.(`the HTTP request failed: ${(e as Error).message.slice(0, 300)}`);
    }
  }

  async close(): Promise<void> {
    try {
      await this.transport.terminateSession();
    } catch {
      // a server that does not allow DELETE (405) or has gone
    }
    await this.transport.close();
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A listening agent side: its URL and how to stop it. */
export interface HttpAgentSide {
  readonly url: string;
  /** Resolves when the agent ends its MCP session (HTTP DELETE). */
  readonly ended: Promise<void>;
  close(): Promise<void>;
}

/** Most bytes of one agent request body. */
export const MAX_AGENT_BODY = 10 * 1024 * 1024;

/** Serves `gateway` to one agent over Streamable HTTP at `http://host:port/mcp`; `onError` hears a failure that stops the day. */
export async function serveHttp(gateway: Gateway, host: string, port: number, onError: (e: unknown) => void): Promise<HttpAgentSide> {
  let transport: StreamableHTTPServerTransport | undefined;
  let end: () => void = () => {};
  const ended = new Promise<void>((r) => (end = r));
  const fresh = (): StreamableHTTPServerTransport => {
    // JSON answers to POSTs; the GET stream (list_changed) carries event ids and replays after Last-Event-ID.
    const t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), enableJsonResponse: true, eventStore: new SessionEvents() });
    t.onclose = () => end();
    t.onmessage = (m) => {
      void gateway.handle(m).then(
        (r) => (r ? t.send(r as unknown as JSONRPCMessage) : undefined),
        (e: unknown) => {
          const id = requestIdOf(m);
          if (id !== undefined) void t.send(failureResponse(id, e) as unknown as JSONRPCMessage);
          onError(e);
        },
      );
    };
    return t;
  };
  // A changed tool list reaches the agent on its GET stream (a notification with no request: the standalone SSE stream, resumable).
  gateway.onToolsChanged = () => void transport?.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' } as JSONRPCMessage).catch(() => undefined);
  const reply = (res: ServerResponse, status: number, code: number, message: string): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') return reply(res, 404, -32601, 'not found: the gateway serves MCP on /mcp');
      let body: unknown;
      if (req.method === 'POST') {
        const b = await readBody(req, MAX_AGENT_BODY);
        if (b === 'aborted') return;
        if (b === 'too-large') return reply(res, 413, -32600, `a request body over ${MAX_AGENT_BODY} bytes`);
        const p = parseStrictJson(b);
        if (!p.ok) return reply(res, 400, -32700, `Parse error (${p.code})`);
        body = p.value;
        const initialize = isObject(body) && body['method'] === 'initialize';
        if (initialize) {
          if (transport?.sessionId !== undefined) return reply(res, 409, -32600, 'this gateway day already has its agent session (a day is one agent\'s); start another proxy for another agent');
          transport ??= fresh();
        }
      }
      if (!transport) return reply(res, 400, -32000, 'no MCP session: send initialize first');
      await transport.handleRequest(req, res, body);
    })().catch((e: unknown) => {
      if (!res.headersSent) reply(res, 500, -32603, 'internal error');
      onError(e);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  return {
    ended,
    url: `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/mcp`,
    async close() {
      await transport?.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
