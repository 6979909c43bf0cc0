/**
 * The one error vocabulary of the wire. Every refusal the server can give has
 * a `type` (the session diagnostics keep their protocol names), a JSON-RPC
 * `code` and an HTTP status. JSON-RPC responses carry the type in
 * `error.data.type`; plain HTTP endpoints answer `{"error": {code, type,
 * message}}` with the mapped status. Pure: no I/O, importable by clients.
 */
import { SESSION_DIAGNOSTICS, type SessionDiagnostic } from '../protocol/index.js';

/** A wire refusal type that is not a session diagnostic. */
export type WireFailureType =
  | 'unauthorized'
  | 'forbidden'
  | 'payload-too-large'
  | 'rate-limited'
  | 'not-found'
  | 'unavailable'
  | 'too-deep'
  | 'unsupported-media-type'
  | 'method-not-allowed'
  | 'malformed-target'
  | 'malformed-query'
  | 'payment-id-conflict'
  | 'parse-error'
  | 'invalid-request'
  | 'method-not-found'
  | 'invalid-params'
  | 'internal';

/** Every refusal type on the wire: the seven session diagnostics and the transport's own. */
export type WireErrorType = SessionDiagnostic | WireFailureType;

/** One row of {@link WIRE_ERRORS}. */
export interface WireErrorRow {
  readonly type: WireErrorType;
  /** JSON-RPC `error.code`. */
  readonly code: number;
  /** HTTP status of a plain endpoint (and of a single, non-batch `/rpc` call). */
  readonly status: number;
  /** True when the same request may succeed later unchanged (the client retries these). */
  readonly retryable: boolean;
  /** When the server answers with it. */
  readonly when: string;
}

/**
 * The table, in code order. Codes of application errors lie in -32001…-32099
 * (outside JSON-RPC's reserved range); the five JSON-RPC codes keep their
 * standard meaning. A code is never reused for another type.
 */
export const WIRE_ERRORS = [
  { type: 'wrong-session', code: -32001, status: 404, retryable: false, when: 'No session has this id (or the turn names another session than the slot).' },
  { type: 'broken-chain', code: -32002, status: 409, retryable: false, when: 'The frame or turn does not continue the chain: wrong ordinal or parentHash.' },
  { type: 'turn-conflict', code: -32003, status: 409, retryable: false, when: 'The slot is already filled with other bytes; nothing was written.' },
  { type: 'stale-frame', code: -32004, status: 409, retryable: false, when: 'The turn answers another frame (frameRoot) than the one delivered for its slot.' },
  { type: 'not-pending', code: -32005, status: 409, retryable: false, when: 'No frame is pending (a turn), or one still is (a frame or finalize).' },
  { type: 'sealed', code: -32006, status: 409, retryable: false, when: 'The session is sealed; only identical retries are answered.' },
  { type: 'malformed-entry', code: -32007, status: 422, retryable: false, when: 'A parameter is missing, mistyped, out of range or not canonical (including undecodable base64 and a declared hash that does not match).' },
  { type: 'unauthorized', code: -32010, status: 401, retryable: false, when: 'No bearer token, or one that no configured hash matches.' },
  { type: 'forbidden', code: -32011, status: 403, retryable: false, when: "The token's role may not call this method, or an agent token touched a session or an intent that is not its agent's." },
  { type: 'payload-too-large', code: -32012, status: 413, retryable: false, when: 'The request body is larger than the server accepts.' },
  { type: 'rate-limited', code: -32013, status: 429, retryable: false, when: "The token's request bucket is empty; `Retry-After` (seconds) and `data.retryAfterMs` say when a request will be accepted." },
  { type: 'not-found', code: -32014, status: 404, retryable: false, when: 'No such route, or the resource does not exist yet (a receipt before the seal, an index beyond the size).' },
  { type: 'unavailable', code: -32015, status: 503, retryable: true, when: 'The server is shutting down or its store is unreachable; retry (turns are content-addressed, so a retry is safe).' },
  { type: 'too-deep', code: -32016, status: 400, retryable: false, when: 'The JSON body nests deeper than the server accepts.' },
  { type: 'unsupported-media-type', code: -32017, status: 415, retryable: false, when: 'POST /rpc without `Content-Type: application/json`.' },
  { type: 'method-not-allowed', code: -32018, status: 405, retryable: false, when: 'The route exists but not for this HTTP method.' },
  { type: 'malformed-target', code: -32019, status: 400, retryable: false, when: 'The request target is neither an RFC 3986 origin-form path nor an absolute http(s) URL (answered before authentication).' },
  { type: 'malformed-query', code: -32020, status: 400, retryable: false, when: 'A query parameter is repeated, or names a position the session does not have (a bundle `from` beyond its size).' },
  { type: 'payment-id-conflict', code: -32021, status: 409, retryable: false, when: "An x402 payment turn reuses a `payment-identifier` id the payer already holds for another payload: the turn and its refusal (`payment_id_conflict`) are recorded, `data` carries them (`index`, `entryHash`, `ruling`); an identical retry gets the same answer." },
  { type: 'parse-error', code: -32700, status: 400, retryable: false, when: 'The body is not strict UTF-8 JSON: invalid UTF-8, a BOM, a duplicate key, a lone surrogate (also as a `\\ud800` escape), trailing data or a syntax error; the message names which (PROTOCOL.md §2.1).' },
  { type: 'invalid-request', code: -32600, status: 400, retryable: false, when: 'Not a JSON-RPC 2.0 request object (or an empty or oversized batch).' },
  { type: 'method-not-found', code: -32601, status: 404, retryable: false, when: 'The method is not one of the six wire verbs.' },
  { type: 'invalid-params', code: -32602, status: 400, retryable: false, when: '`params` is not an object.' },
  { type: 'internal', code: -32603, status: 500, retryable: true, when: 'A bug or an I/O failure inside the server; retry, then report it.' },
] as const satisfies readonly WireErrorRow[];

/** Every wire error type, in table order. */
export const WIRE_ERROR_TYPES: readonly WireErrorType[] = WIRE_ERRORS.map((r) => r.type);

// Both ways: every type has exactly one row, and every row's type is a WireErrorType.
type Missing<U, T> = Exclude<U, T>;
type AssertNever<T extends never> = T;
export type _GuardWireErrors = AssertNever<Missing<WireErrorType, (typeof WIRE_ERRORS)[number]['type']>>;

const BY_TYPE = new Map<string, WireErrorRow>(WIRE_ERRORS.map((r) => [r.type, r]));
const BY_CODE = new Map<number, WireErrorRow>(WIRE_ERRORS.map((r) => [r.code, r]));

/** The row of a wire error type. */
export function wireErrorRow(type: WireErrorType): WireErrorRow {
  return BY_TYPE.get(type)!;
}

/** The row of a JSON-RPC code, if it is one of ours. */
export function wireErrorRowByCode(code: number): WireErrorRow | undefined {
  return BY_CODE.get(code);
}

/** True when `x` names a wire error type. */
export function isWireErrorType(x: unknown): x is WireErrorType {
  return typeof x === 'string' && BY_TYPE.has(x);
}

/** True when `x` is one of the session diagnostics (a typed refusal of a verb). */
export function isSessionDiagnostic(x: unknown): x is SessionDiagnostic {
  return typeof x === 'string' && (SESSION_DIAGNOSTICS as readonly string[]).includes(x);
}

/** A refusal as the service returns it, before it is put in an envelope. */
export interface WireFailure {
  readonly type: WireErrorType;
  readonly message: string;
  /** Extra members of `error.data` (for example `retryAfterMs`, `issues`). */
  readonly data?: Readonly<Record<string, unknown>>;
  /**
   * `false` when a retry cannot help this failure although its type's row says
   * one may (an `internal` from a corrupt store); absent, the row decides.
   */
  readonly retryable?: false;
}

/** Whether the same request may succeed later: the failure's own `retryable: false`, else its type's row. */
export function isRetryable(f: WireFailure): boolean {
  return f.retryable ?? wireErrorRow(f.type).retryable;
}

/** The JSON-RPC `error` object of a failure: `{code, message, data: {type, retryable, …}}`. */
export function rpcErrorObject(f: WireFailure): { code: number; message: string; data: Record<string, unknown> } {
  const row = wireErrorRow(f.type);
  return { code: row.code, message: f.message, data: { ...f.data, type: f.type, retryable: isRetryable(f) } };
}

/** The body of a plain endpoint's error: `{"error": {code, type, message, …data}}`. */
export function httpErrorBody(f: WireFailure): { error: Record<string, unknown> } {
  const row = wireErrorRow(f.type);
  return { error: { ...f.data, code: row.code, type: f.type, message: f.message, retryable: isRetryable(f) } };
}
