/**
 * `tally mcp`: the wire verbs as Model Context Protocol tools. Built on the
 * SDK's `McpServer`, with the tools/list handler set on its protocol server
 * directly and tools/call answered from the raw request (the fallback
 * handler) so that EVERY refusal — arguments that are not an object or fail
 * the schema included — comes back as a tool result with `isError: true` and
 * structured content `{ error: { type, code, message, retryable, advice, … } }`
 * (the SDK's own validation would answer with text only). Protocol errors
 * are kept for protocol problems (an unknown tool).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { verifyBundle } from '../../codec/index.js';
import type { SessionMessageKind } from '../../protocol/index.js';
import type { Principal } from '../auth.js';
import { OPERATOR } from '../auth.js';
import type { WireService } from '../service.js';
import { wireErrorRow, isWireErrorType, type WireFailure } from '../vocabulary.js';
import { adviceFor, intentFix } from './advice.js';
import { TOOLS, inputJsonSchema, toolNamed, verifyParams } from './tools.js';

/** A refusal as a backend reports it (`network` when a remote server could not be reached). */
export type BackendFailure = WireFailure | { readonly type: 'network' | 'bad-response'; readonly message: string; readonly data?: Readonly<Record<string, unknown>> };

/** Where the tools send the verbs: a local engine, or a remote `tally serve`. */
export interface McpBackend {
  call(method: SessionMessageKind, params: Record<string, unknown>): Promise<{ ok: true; result: Record<string, unknown> } | { ok: false; failure: BackendFailure }>;
  bundle(sessionId: string): Promise<{ ok: true; chunks: AsyncIterable<Uint8Array> } | { ok: false; failure: BackendFailure }>;
}

/**
 * A backend over a local {@link WireService}. The principal defaults to the
 * operator: a stdio server has no network peer, and whoever can start it can
 * already open the database.
 */
export function localBackend(service: WireService, principal: Principal = OPERATOR): McpBackend {
  return {
    async call(method, params) {
      const out = await service.call(principal, method, params);
      return out.ok ? { ok: true, result: out.result } : { ok: false, failure: out.failure };
    },
    async bundle(sessionId) {
      const out = await service.bundle(principal, sessionId);
      return out.ok ? { ok: true, chunks: out.value } : { ok: false, failure: out.failure };
    },
  };
}

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  readonly name?: string;
  readonly version?: string;
  /** Called after each tool call (for stderr logs): never given arguments or bytes. */
  readonly onCall?: (info: { tool: string; ok: boolean; type?: string; ms: number; session?: string }) => void;
}

const INSTRUCTIONS = `Tally records a run as a hash-chained, sealed transcript.
Flow: session_open(spec) → session_frame(ordinal -1, the OPEN frame) → session_turn answering it → session_frame(0) → session_turn … → session_finalize.
Each frame has exactly one answer. A turn quotes the frame it answers (ordinal, parentHash = the frame's entryHash, frameRoot).
Every write is safe to retry with the SAME arguments (the recorded result comes back with duplicate: true); never change the content of a retry.
Lost? session_describe shows the pending frame to quote. Refusals come back as tool results with isError: true and structuredContent.error.type.`;

function failureResult(f: BackendFailure): CallToolResult {
  const row = isWireErrorType(f.type) ? wireErrorRow(f.type) : undefined;
  const retryable = row ? ('retryable' in f && f.retryable === false ? false : row.retryable) : true;
  const advice = adviceFor(f.type, retryable);
  const error = { ...f.data, type: f.type, ...(row ? { code: row.code, retryable } : { retryable: true }), message: f.message, advice };
  return { isError: true, content: [{ type: 'text', text: `${f.type}: ${f.message}\n${advice}` }], structuredContent: { error } };
}

function summary(tool: string, r: Record<string, unknown>): string {
  const dup = r['duplicate'] === true ? ' (duplicate: this content was already recorded; nothing new was written)' : '';
  switch (tool) {
    case 'session_open':
      return `Session ${String(r['sessionId'])} ${r['created'] ? 'created' : 'already existed'}.`;
    case 'session_frame':
      return `Frame ${String(r['ordinal'])} recorded at index ${String(r['index'])}${dup}. Answer it with session_turn quoting ordinal ${String(r['ordinal'])}, parentHash ${String(r['entryHash'])}, frameRoot ${String(r['frameRoot'])}.`;
    case 'session_turn': {
      let s = `Turn ${String(r['ordinal'])} recorded at index ${String(r['index'])}${dup}.`;
      const intent = (r['ruling'] as Record<string, unknown> | undefined)?.['intent'] as Record<string, unknown> | undefined;
      if (intent?.['admitted'] === true) s += ` Intent admitted (${String(intent['action'])}, nonce ${String(intent['nonce'])}).`;
      else if (intent) {
        const fix = intentFix(String(intent['code']));
        s += ` The intent was REJECTED and recorded as rejected: ${String(intent['code'])} (${String(intent['stage'])}): ${String(intent['message'])}.${fix ? ` Fix: ${fix}` : ''} Do not resend these bytes; answer the next frame with a corrected intent and a fresh nonce.`;
      }
      return s;
    }
    case 'session_finalize': {
      const rc = r['receipt'] as Record<string, unknown>;
      return `Sealed${dup}: ${String(rc['size'])} entries, receipt root ${String(rc['receiptRoot'])}.`;
    }
    case 'session_events':
      return `${(r['events'] as unknown[]).length} entries; next cursor ${String(r['next'])}${r['more'] ? ' (more: call again)' : ''}; phase ${String(r['phase'])}.`;
    case 'session_describe':
      return `Phase ${String(r['phase'])}, ${String(r['size'])} entries, next ordinal ${String(r['nextOrdinal'])}.`;
    default:
      return '';
  }
}

async function runVerify(backend: McpBackend, args: unknown): Promise<CallToolResult> {
  const v = verifyParams.safeParse(args);
  if (!v.success) return invalid('verify', v.error.issues);
  const p = v.data;
  let chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  if (p.bundle !== undefined) chunks = [new TextEncoder().encode(p.bundle)];
  else {
    const b = await backend.bundle(p.sessionId!);
    if (!b.ok) return failureResult(b.failure);
    chunks = b.chunks;
  }
  const pin = { ...(p.receiptRoot === undefined ? {} : { receiptRoot: p.receiptRoot }), ...(p.size === undefined ? {} : { size: p.size }), ...(p.sessionId === undefined ? {} : { sessionId: p.sessionId }) };
  const r = await verifyBundle(chunks, { requireSealed: p.unsealed !== true, pin });
  const structured = { valid: r.ok, ...r } as Record<string, unknown>;
  delete structured['ok'];
  const text = r.ok
    ? `VALID: ${r.size} entries (${r.frames} frames, ${r.turns} turns)${r.sealed ? ', sealed' : ', not sealed'}; receipt root ${r.receiptRoot}.`
    : `INVALID at entry ${r.index}: ${r.code}: ${r.message}`;
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

function notAnObject(tool: string, args: unknown): CallToolResult {
  const got = args === null ? 'null' : Array.isArray(args) ? 'an array' : `a ${typeof args}`;
  return failureResult({ type: 'malformed-entry', message: `${tool} arguments must be an object, got ${got}`, data: { issues: [{ path: '', message: `expected an object, got ${got}` }] } });
}

function invalid(tool: string, issues: readonly { path: readonly PropertyKey[]; message: string }[]): CallToolResult {
  const list = issues.slice(0, 10).map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  const first = list[0]!;
  return failureResult({ type: 'malformed-entry', message: `${tool} arguments: ${first.path || '(arguments)'}: ${first.message}`, data: { issues: list } });
}

/**
 * Creates the MCP server over `backend`; connect it to a transport (stdio for `tally mcp`).
 *
 * @example
 * const mcp = createMcpServer(localBackend(new WireService(createEngine({ store }))));
 * await mcp.connect(new StdioServerTransport());
 */
export function createMcpServer(backend: McpBackend, options: McpServerOptions = {}): McpServer {
  const mcp = new McpServer({ name: options.name ?? 'tally', version: options.version ?? '0.0.0' }, { instructions: INSTRUCTIONS });
  const server = mcp.server;
  server.registerCapabilities({ tools: { listChanged: false } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOLS.map((t) => ({ name: t.name, title: t.annotations.title, description: t.description, inputSchema: inputJsonSchema(t) as { type: 'object' }, annotations: t.annotations })),
  }));
  // tools/call is answered by the fallback handler, which sees the raw request: a registered handler
  // would first run the SDK's schema, and `arguments` that are not an object would become a -32603
  // with the validator's dump instead of the isError result every other bad argument gets.
  server.fallbackRequestHandler = async (req) => {
    if (req.method !== 'tools/call') throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${req.method.slice(0, 64)}`);
    const name = req.params?.['name'];
    if (typeof name !== 'string') throw new McpError(ErrorCode.InvalidParams, 'tools/call needs params.name, a string');
    const tool = toolNamed(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name.slice(0, 64)}`);
    const t0 = performance.now();
    const given: unknown = req.params?.['arguments'];
    const args = given === undefined ? {} : given;
    let result: CallToolResult;
    let session: string | undefined;
    try {
      if (typeof args !== 'object' || args === null || Array.isArray(args)) result = notAnObject(tool.name, args);
      else if (!tool.method) result = await runVerify(backend, args);
      else {
        const v = tool.schema.safeParse(args);
        if (!v.success) result = invalid(tool.name, v.error.issues);
        else {
          const out = await backend.call(tool.method, v.data as Record<string, unknown>);
          if (out.ok) {
            const sid = out.result['sessionId'];
            if (typeof sid === 'string') session = sid;
            result = { content: [{ type: 'text', text: `${summary(tool.name, out.result)}\n${JSON.stringify(out.result)}` }], structuredContent: out.result };
          } else result = failureResult(out.failure);
        }
      }
    } catch (e) {
      result = failureResult({ type: 'internal', message: `internal error: ${(e as Error)?.message ?? String(e)}`.slice(0, 300) });
    }
    const type = result.isError ? String((result.structuredContent as { error?: { type?: unknown } } | undefined)?.error?.type) : undefined;
    options.onCall?.({ tool: tool.name, ok: result.isError !== true, ms: Math.round((performance.now() - t0) * 100) / 100, ...(type === undefined ? {} : { type }), ...(session === undefined ? {} : { session }) });
    return result;
  };
  return mcp;
}
