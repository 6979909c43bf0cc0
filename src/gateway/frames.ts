/**
 * The bytes the gateway records (docs/PROTOCOL.md §18): the OPEN frame's data,
 * the tool-call turn's authored bytes, each tool-result frame's data — and the
 * agent's answer, which is always read back from a recorded frame, so what the
 * agent was told and what the day says cannot differ.
 */
import { tryCanonicalJson, type CanonicalObject, type CanonicalValue } from '../protocol/index.js';
import { recordedValue } from '../referee/tool-ruler.js';
import { TOOL_CODE_FIX, type ToolCode } from '../referee/tool-codes.js';
import type { UpstreamOutcome } from './upstream.js';

/** A value recorded as itself when it has a canonical form, else as `<name>_text`: its JSON text. */
export function record(name: string, value: unknown): CanonicalObject {
  const c = tryCanonicalJson(value, { level: 3 });
  if (c.ok) return { [name]: value as CanonicalValue };
  return { [`${name}_text`]: JSON.stringify(value) };
}

/** The OPEN frame's data: the upstream's `initialize` result and its `tools/list`. */
export function openFrameData(server: string, initialize: Record<string, unknown>, tools: readonly unknown[]): CanonicalObject {
  return { kind: 'mcp-open', server, ...record('initialize', initialize), ...record('tools', tools) };
}

/** The authored bytes of a tool-call turn: the request's canonical JSON, else (ruled `tool_call_not_canonical`) its JSON text. */
export function callBytes(request: Record<string, unknown>): Uint8Array {
  const c = tryCanonicalJson(request);
  return new TextEncoder().encode(c.ok ? c.text : JSON.stringify(request));
}

/** What happened to a call, as the tool-result frame records it. */
export type CallOutcome = UpstreamOutcome | { readonly kind: 'refused'; readonly code: ToolCode; readonly message: string };

const DETAIL_MAX = 400;

/** The data of the tool-result frame that answers call `id`; `lists` are the tool lists re-read since the last frame (`tools`, or `servers` §18.6). */
export function resultFrameData(id: string | number, o: CallOutcome, lists: CanonicalObject = {}): CanonicalObject {
  const base = { kind: 'tool-result', id, outcome: o.kind, ...lists };
  switch (o.kind) {
    case 'result':
      return { ...base, ...record('result', o.result) };
    case 'error':
      return { ...base, ...record('error', o.error) };
    case 'refused':
      return { ...base, code: o.code, message: o.message };
    case 'unknown':
      return { ...base, reason: o.reason, detail: o.detail.slice(0, DETAIL_MAX) };
    case 'too-large':
      return { ...base, bytes: o.bytes };
    case 'unavailable':
      return { ...base, detail: o.detail.slice(0, DETAIL_MAX) };
  }
}

function isolatedError(text: string, ruling?: Record<string, unknown>): Record<string, unknown> {
  return { content: [{ type: 'text', text }], isError: true, ...(ruling === undefined ? {} : { _meta: { 'dev.tally/ruling': ruling } }) };
}

/** The JSON-RPC response the agent gets for call `id`, read from its recorded tool-result frame data. */
export function agentResponse(id: string | number, data: Record<string, unknown>): Record<string, unknown> {
  const ok = (result: unknown) => ({ jsonrpc: '2.0', id, result });
  switch (data['outcome']) {
    case 'result':
      return ok(recordedValue(data, 'result'));
    case 'error':
      return { jsonrpc: '2.0', id, error: recordedValue(data, 'error') };
    case 'refused': {
      const code = data['code'] as ToolCode;
      const fix = TOOL_CODE_FIX[code] ?? 'see docs/PROTOCOL.md §18';
      return ok(isolatedError(`Tally refused this call (${code}): ${String(data['message'])}. What to do: ${fix}. Nothing was sent to the server.`, { code, message: data['message'], fix }));
    }
    case 'unknown': {
      const why = data['reason'] === 'timeout' ? 'the server did not answer in time' : data['reason'] === 'crashed' ? 'the server exited during the call' : data['reason'] === 'unreachable' ? 'the request to the server failed' : 'the server answered with a malformed message';
      return ok(isolatedError(`The outcome of this call is UNKNOWN: ${why} (${String(data['detail'])}). It was sent to the server and may have run: check its effect before retrying.${data['reason'] === 'crashed' ? ' The gateway cannot serve further calls; restart it.' : ''}`, { outcome: 'unknown', reason: data['reason'] }));
    }
    case 'too-large':
      return ok(isolatedError(`The server's answer (${String(data['bytes'])} bytes) is over the gateway's bound and was not passed on; the call did run. Ask for less (a smaller page or range).`, { outcome: 'too-large', bytes: data['bytes'] }));
    default:
      return ok(isolatedError(`The server is not running (${String(data['detail'])}); nothing was sent. Restart the gateway.`, { outcome: 'unavailable' }));
  }
}

/** The id of a JSON-RPC request (`undefined` for a notification or a response). */
export function requestIdOf(message: unknown): string | number | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const m = message as Record<string, unknown>;
  const id = m['id'];
  return typeof m['method'] === 'string' && (typeof id === 'string' || typeof id === 'number') ? id : undefined;
}

/** What the agent is told when the day could not record its request (the store failed): a JSON-RPC error, the outcome unknown. */
export function failureResponse(id: string | number, e: unknown): Record<string, unknown> {
  const message = e instanceof Error ? e.message : String(e);
  return { jsonrpc: '2.0', id, error: { code: -32603, message: `the Tally gateway could not record this request (${message.slice(0, 200)}); if it was a tool call its outcome is unknown; the gateway records nothing more` } };
}
