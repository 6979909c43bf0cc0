/**
 * The MCP gateway's tool calls as OpenTelemetry GenAI `execute_tool` spans:
 * `gen_ai.operation.name` = `execute_tool`, `gen_ai.tool.name` (only a tool
 * the upstream offered, and only a plain short word), `gen_ai.tool.call.id`
 * (an integer request id), `gen_ai.conversation.id` = the session id, the
 * referee's decision as `gen_ai.guardrail.result` (`admitted` / `refused`)
 * with `tally.ruling.code`, and `tally.tool.outcome`. Every value passes the
 * one gate (safe.ts): arguments and results never appear.
 */
import { ATTR, SPAN } from './names.js';
import { allowed } from './safe.js';
import { annotate, inSpan, tracing } from './spans.js';

/** What is known of a call before it runs. */
export interface ToolCallStart {
  readonly sessionId: string;
  readonly callId: unknown;
  /** The tool's name, when the upstream offered it (else `undefined`: never an agent's free text). */
  readonly tool: string | undefined;
}

/** What the call ended as. */
export interface ToolCallEnd {
  readonly admitted: boolean;
  readonly code: string;
  readonly outcome: string;
}

/** Runs one gateway call in an `execute_tool` span; `fn` returns its value and how it ended. */
export function traceToolCall<T>(start: ToolCallStart, fn: () => Promise<{ value: T; end: ToolCallEnd }>): Promise<T> {
  if (!tracing()) return fn().then((r) => r.value);
  const name = start.tool !== undefined && allowed(ATTR.genAiTool, start.tool) ? `${SPAN.tool} ${start.tool}` : SPAN.tool;
  return inSpan(name, { [ATTR.genAiOperation]: 'execute_tool', [ATTR.genAiTool]: start.tool, [ATTR.genAiCallId]: start.callId, [ATTR.genAiConversation]: start.sessionId }, async (span) => {
    const r = await fn();
    annotate(span, { [ATTR.genAiGuardrail]: r.end.admitted ? 'admitted' : 'refused', [ATTR.ruling]: r.end.code, [ATTR.toolOutcome]: r.end.outcome });
    return r.value;
  });
}
