/**
 * The MCP stdio transport with Tally's one parser. The SDK's
 * StdioServerTransport parses each line with `JSON.parse`, which keeps the
 * last of two duplicate keys and turns a lone-surrogate escape into a string
 * Tally would refuse anywhere else. This transport splits stdin into lines
 * itself, reads each line's raw bytes with {@link parseStrictJson}, and
 * answers a refused line with a JSON-RPC parse error (-32700, the request's id
 * when readable else `null`,
 * `data.code` the strict-JSON code) — docs/WIRE.md §8. A line that is strict
 * JSON but not a JSON-RPC message is answered -32600 (`id: null`).
 */
import process from 'node:process';
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { parseStrictJson } from '../../protocol/index.js';

/** Most bytes buffered without a newline (the SDK's default). */
const MAX_BUFFER = 10 * 1024 * 1024;

/**
 * The id a refused line's caller waits on, so a host is not left hanging: the
 * `id` member as a lenient parse reads it, only when it is a string or an
 * integer; `null` otherwise (JSON-RPC's id for an unreadable request). The
 * message itself is never acted on.
 */
function requestId(line: Uint8Array): string | number | null {
  try {
    const v = JSON.parse(new TextDecoder().decode(line)) as unknown;
    const id = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>)['id'] : undefined;
    return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null;
  } catch {
    return null;
  }
}

/** A stdio MCP transport whose every incoming line goes through the strict parser. */
export class StrictStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private buffer: Buffer = Buffer.alloc(0);
  private started = false;
  private readonly ondata = (chunk: Buffer): void => this.append(chunk);
  private readonly onStreamError = (e: Error): void => this.onerror?.(e);

  constructor(
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
  ) {}

  /** Starts reading stdin. */
  async start(): Promise<void> {
    if (this.started) throw new Error('StrictStdioServerTransport already started');
    this.started = true;
    this.stdin.on('data', this.ondata);
    this.stdin.on('error', this.onStreamError);
  }

  private append(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (let i = this.buffer.indexOf(0x0a); i !== -1; i = this.buffer.indexOf(0x0a)) {
      let line = this.buffer.subarray(0, i);
      this.buffer = this.buffer.subarray(i + 1);
      if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, -1);
      this.receive(line);
    }
    if (this.buffer.length > MAX_BUFFER) {
      this.buffer = Buffer.alloc(0);
      this.onerror?.(new Error(`MCP message exceeds ${MAX_BUFFER} bytes without a newline`));
      void this.close();
    }
  }

  private receive(line: Uint8Array): void {
    const r = parseStrictJson(line);
    if (!r.ok) {
      void this.send({ jsonrpc: '2.0', id: requestId(line), error: { code: -32700, message: `Parse error (${r.code}): ${r.message}`, data: { code: r.code } } } as unknown as JSONRPCMessage);
      return;
    }
    const m = JSONRPCMessageSchema.safeParse(r.value);
    if (!m.success) {
      void this.send({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' } } as unknown as JSONRPCMessage);
      return;
    }
    this.onmessage?.(m.data);
  }

  /** Stops reading stdin. */
  async close(): Promise<void> {
    this.stdin.off('data', this.ondata);
    this.stdin.off('error', this.onStreamError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.buffer = Buffer.alloc(0);
    this.onclose?.();
  }

  /** Writes one message as one line. */
  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(JSON.stringify(message) + '\n')) resolve();
      else this.stdout.once('drain', () => resolve());
    });
  }
}
