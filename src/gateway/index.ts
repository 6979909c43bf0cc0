/**
 * `agent-tally/gateway` — an MCP gateway any agent can sit behind: every
 * tool call refereed, recorded and sealed (docs/PROTOCOL.md §18, docs/HARNESS.md).
 */
export { Gateway, GatewayError } from './gateway.js';
export type { GatewayOptions, GatewayFailure } from './gateway.js';
export { agentTools, routeCall } from './servers.js';
export type { NamedUpstream } from './servers.js';
export { Upstream, ChildChannel } from './upstream.js';
export type { Channel, UpstreamOutcome } from './upstream.js';
export { serveStdio, MAX_AGENT_LINE } from './stdio.js';
export { agentResponse, callBytes, openFrameData, resultFrameData, record } from './frames.js';
export type { CallOutcome } from './frames.js';
export { HttpChannel, serveHttp, MAX_AGENT_BODY } from './http.js';
export type { HttpAgentSide } from './http.js';
