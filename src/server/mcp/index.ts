/** The MCP face of the wire (`tally mcp`). */
export { createMcpServer, localBackend } from './server.js';
export type { McpBackend, McpServerOptions, BackendFailure } from './server.js';
export { TOOLS, toolNamed, inputJsonSchema, verifyParams } from './tools.js';
export type { ToolDef, ToolHints } from './tools.js';
export { adviceFor, intentFix } from './advice.js';
export { StrictStdioServerTransport } from './strict-stdio.js';
