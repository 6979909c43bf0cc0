/**
 * JSON-RPC 2.0 envelopes: one request or a batch in, responses out, with the
 * HTTP status the response travels with. A single call's status is its
 * error's mapped status (200 for a result, 204 for a notification); a batch
 * always travels as 200 (each member carries its own error).
 */
import type { CallOutcome } from './service.js';
import { rpcErrorObject, wireErrorRow, type WireFailure } from './vocabulary.js';

/** A JSON-RPC id: string, number or null. */
export type RpcId = string | number | null;

/** One JSON-RPC response object. */
export type RpcResponse =
  | { readonly jsonrpc: '2.0'; readonly id: RpcId; readonly result: Record<string, unknown> }
  | { readonly jsonrpc: '2.0'; readonly id: RpcId; readonly error: { code: number; message: string; data: Record<string, unknown> } };

/** What the transport sends back, and what each call did (for the log). */
export interface RpcReply {
  readonly status: number;
  /** `undefined` when nothing is sent (only notifications). */
  readonly body: RpcResponse | RpcResponse[] | undefined;
  readonly calls: readonly { readonly outcome: CallOutcome; readonly ms: number }[];
}

/** Runs one call; the transport supplies authorization and rate limiting. */
export type RpcExecutor = (method: string, params: unknown) => Promise<CallOutcome>;

/** An error response with id null (or the request's id). */
export function rpcError(failure: WireFailure, id: RpcId = null): RpcResponse {
  return { jsonrpc: '2.0', id, error: rpcErrorObject(failure) };
}

function isId(v: unknown): v is RpcId {
  return v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

async function one(req: unknown, exec: RpcExecutor, calls: { outcome: CallOutcome; ms: number }[]): Promise<{ response: RpcResponse | undefined; failure?: WireFailure }> {
  if (typeof req !== 'object' || req === null || Array.isArray(req)) {
    const failure: WireFailure = { type: 'invalid-request', message: 'a request must be a JSON-RPC 2.0 object' };
    return { response: rpcError(failure), failure };
  }
  const r = req as Record<string, unknown>;
  const hasId = Object.hasOwn(r, 'id');
  const id = hasId && isId(r['id']) ? r['id'] : null;
  for (const k of Object.keys(r)) {
    if (k !== 'jsonrpc' && k !== 'id' && k !== 'method' && k !== 'params') {
      const failure: WireFailure = { type: 'invalid-request', message: `unknown member "${k.slice(0, 32)}" in the request object` };
      return { response: rpcError(failure, id), failure };
    }
  }
  if (r['jsonrpc'] !== '2.0' || typeof r['method'] !== 'string' || (hasId && !isId(r['id']))) {
    const failure: WireFailure = { type: 'invalid-request', message: 'a request needs jsonrpc "2.0", a string method and an id that is a string, number or null' };
    return { response: rpcError(failure, id), failure };
  }
  const t0 = performance.now();
  const outcome = await exec(r['method'], r['params'] ?? {});
  calls.push({ outcome, ms: performance.now() - t0 });
  if (!hasId) return { response: undefined };
  if (outcome.ok) return { response: { jsonrpc: '2.0', id, result: outcome.result } };
  return { response: rpcError(outcome.failure, id), failure: outcome.failure };
}

/**
 * Handles a parsed JSON-RPC body. Batch members run in order, one after the
 * other (a frame and the turn answering it may travel together).
 *
 * @example
 * const reply = await handleRpc(JSON.parse(body), (m, p) => service.call(principal, m, p), 32);
 */
export async function handleRpc(doc: unknown, exec: RpcExecutor, maxBatch: number): Promise<RpcReply> {
  const calls: { outcome: CallOutcome; ms: number }[] = [];
  if (Array.isArray(doc)) {
    if (doc.length === 0 || doc.length > maxBatch) {
      const failure: WireFailure = { type: 'invalid-request', message: `a batch must hold 1 to ${maxBatch} requests` };
      return { status: wireErrorRow('invalid-request').status, body: rpcError(failure), calls };
    }
    const out: RpcResponse[] = [];
    for (const req of doc) {
      const { response } = await one(req, exec, calls);
      if (response) out.push(response);
    }
    return { status: out.length === 0 ? 204 : 200, body: out.length === 0 ? undefined : out, calls };
  }
  const { response, failure } = await one(doc, exec, calls);
  if (!response) return { status: 204, body: undefined, calls };
  return { status: failure ? wireErrorRow(failure.type).status : 200, body: response, calls };
}
