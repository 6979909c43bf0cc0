/**
 * `agent-tally/server`: the wire — the six verbs over HTTP (JSON-RPC 2.0) and
 * MCP (stdio), behind bearer tokens, with one error vocabulary.
 *
 * @example
 * import { createEngine } from 'agent-tally';
 * import { openStore } from 'agent-tally/store';
 * import { Authenticator, createWireServer, loadAuthConfig } from 'agent-tally/server';
 * const server = createWireServer({ engine: createEngine({ store: await openStore() }), auth: new Authenticator(loadAuthConfig(undefined, process.env).config) });
 * await server.listen(8787);
 */
export { createWireServer, WireServer } from './http.js';
export type { WireServerOptions, ListenAddress } from './http.js';
export { DEFAULT_LIMITS } from './limits.js';
export type { WireServerLimits } from './limits.js';
export { WireService } from './service.js';
export type { CallOutcome, CallMeta, ReadOutcome, WireServiceOptions, InclusionProofResult } from './service.js';
export { Authenticator, OPERATOR, ROLES, MAX_TOKEN_LENGTH, authConfigSchema, generateToken, hashToken, loadAuthConfig, parseAuthConfig } from './auth.js';
export type { AuthConfig, AuthSource, Principal, Role, TokenEntry } from './auth.js';
export { roleMayCall, sessionAccess, turnAccess } from './access.js';
export { RateLimiter, TokenBucket } from './rate-limit.js';
export type { RateSpec } from './rate-limit.js';
export { nestsDeeperThan, parseJsonBody } from './json.js';
export type { ParsedBody } from './json.js';
export { handleRpc, rpcError } from './rpc.js';
export type { RpcId, RpcResponse, RpcReply, RpcExecutor } from './rpc.js';
export { PARAMS_SCHEMAS, decodeParams, authoredBytesOf, openParams, frameParams, turnParams, eventsParams, describeParams, finalizeParams } from './schemas.js';
export type { WireParams } from './schemas.js';
export {
  WIRE_ERRORS,
  WIRE_ERROR_TYPES,
  httpErrorBody,
  isSessionDiagnostic,
  isWireErrorType,
  rpcErrorObject,
  wireErrorRow,
  wireErrorRowByCode,
} from './vocabulary.js';
export type { WireErrorRow, WireErrorType, WireFailure, WireFailureType } from './vocabulary.js';
export { createLogger } from './log.js';
export type { Logger, LoggerOptions } from './log.js';
export { createMcpServer, localBackend, TOOLS, toolNamed, inputJsonSchema, verifyParams, adviceFor, intentFix } from './mcp/index.js';
export type { McpBackend, McpServerOptions, BackendFailure, ToolDef, ToolHints } from './mcp/index.js';
export type { ReadyReport, ReadyCheck, ReadyCheckName, ReadinessTarget } from './ready.js';
export type { MetricsRenderer } from './metrics-http.js';
