/**
 * The agent's side of the gateway on stdio: newline-delimited JSON-RPC on
 * stdin/stdout, each line read by the strict parser (a refused line is
 * answered -32700, as `tally mcp` does, docs/WIRE.md §8). Nothing but MCP is
 * ever written to stdout. Resolves when the agent closes stdin.
 */
import type { Readable, Writable } from 'node:stream';
import type { Gateway } from './gateway.js';
import { LineReader } from './lines.js';
import { failureResponse, requestIdOf } from './frames.js';

/** Most bytes of one agent message (the SDK's stdio default buffer). */
export const MAX_AGENT_LINE = 10 * 1024 * 1024;

/** Serves `gateway` on a pair of streams until `input` ends; `onError` hears a failure that stops the day. */
export function serveStdio(gateway: Gateway, input: Readable, output: Writable, onError: (e: unknown) => void): Promise<void> {
  const write = (m: Record<string, unknown>): void => {
    if (!output.destroyed) output.write(JSON.stringify(m) + '\n');
  };
  let inflight = Promise.resolve();
  gateway.onToolsChanged = () => write({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  const reader = new LineReader(
    {
      value(v) {
        const job = gateway.handle(v).then(
          (r) => {
            if (r) write(r);
          },
          (e: unknown) => {
            // The day could not record the call: the agent is told (never left waiting), the proxy reports it.
            const id = requestIdOf(v);
            if (id !== undefined) write(failureResponse(id, e));
            onError(e);
          },
        );
        inflight = inflight.then(() => job);
      },
      malformed(code, _snippet) {
        write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error (${code})`, data: { code } } });
      },
      oversize(bytes) {
        write({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: a message of ${bytes} bytes is over the bound of ${MAX_AGENT_LINE}` } });
      },
    },
    MAX_AGENT_LINE,
  );
  return new Promise((resolve) => {
    input.on('data', (c: Buffer) => reader.push(c));
    input.once('end', () => void inflight.then(() => resolve()));
    input.once('close', () => void inflight.then(() => resolve()));
  });
}
