/**
 * `tally serve` speaking MCP over Streamable HTTP at `/mcp`: the same tools
 * as `tally mcp` (createMcpServer over the same WireService), each MCP
 * session bound to the bearer token that initialized it (a request with
 * another token, or none, never reaches it: 404, as for an unknown session),
 * with the MCP spec's session rules (`Mcp-Session-Id`, DELETE ends one) and
 * resumability (SSE event ids; `Last-Event-ID` replays from a bounded
 * per-session event store). Bodies are read under the server's body limit
 * and parsed by the strict parser before the SDK sees them.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { readBody } from '../../http/body.js';
import { parseStrictJson } from '../../protocol/index.js';
import type { Principal } from '../auth.js';
import type { WireService } from '../service.js';
import { createMcpServer, localBackend } from './server.js';
import { EVENTS_PER_SESSION, SessionEvents } from './events.js';

/** Bounds of the `/mcp` route. */
export const MCP_HTTP_LIMITS = Object.freeze({ maxSessions: 256, eventsPerSession: EVENTS_PER_SESSION });

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: McpServer;
  readonly owner: string;
}

function sendError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}

/** The `/mcp` route of one `tally serve`. */
export class McpHttpRoute {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly service: WireService,
    private readonly maxBodyBytes: number,
    private readonly info: { readonly name: string; readonly version: string } = { name: 'tally', version: '0.0.0' },
  ) {}

  /** Serves one request for an authenticated `principal`. */
  async handle(req: IncomingMessage, res: ServerResponse, principal: Principal): Promise<void> {
    const header = req.headers['mcp-session-id'];
    const id = typeof header === 'string' ? header : undefined;
    let body: unknown;
    if (req.method === 'POST') {
      const b = await readBody(req, this.maxBodyBytes);
      if (b === 'aborted') return;
      if (b === 'too-large') return sendError(res, 413, -32600, `the request body is over ${this.maxBodyBytes} bytes`);
      const p = parseStrictJson(b);
      if (!p.ok) return sendError(res, 400, -32700, `Parse error (${p.code})`);
      body = p.value;
    } else if (req.method !== 'GET' && req.method !== 'DELETE') {
      res.setHeader('allow', 'GET, POST, DELETE');
      return sendError(res, 405, -32000, 'use POST, GET or DELETE on /mcp');
    }
    if (id === undefined) {
      const init = typeof body === 'object' && body !== null && !Array.isArray(body) && (body as Record<string, unknown>)['method'] === 'initialize';
      if (!init) return sendError(res, 400, -32000, 'no Mcp-Session-Id: send initialize first');
      if (this.sessions.size >= MCP_HTTP_LIMITS.maxSessions) return sendError(res, 503, -32000, 'too many MCP sessions on this server; end one (DELETE /mcp) and retry');
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new SessionEvents(),
        onsessioninitialized: (sid) => {
          this.sessions.set(sid, { transport, server, owner: principal.name });
        },
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) this.sessions.delete(transport.sessionId);
      };
      const server = createMcpServer(localBackend(this.service, principal), this.info);
      await server.connect(transport);
      return transport.handleRequest(req, res, body);
    }
    const s = this.sessions.get(id);
    // A session is its token's: another token cannot even learn that it exists.
    if (s === undefined || s.owner !== principal.name) return sendError(res, 404, -32001, 'Session not found');
    return s.transport.handleRequest(req, res, body);
  }

  /** Ends every session (server shutdown). */
  async close(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.server.close()));
  }
}
