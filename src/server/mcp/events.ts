/**
 * The resumability store of one MCP session on Streamable HTTP (MCP spec,
 * "Resumability and Redelivery"): every message sent on an SSE stream gets an
 * event id `<stream id>_<n>`; a client that reconnects with `Last-Event-ID`
 * is sent the messages of that stream after it. Bounded: the oldest events
 * are dropped first. Shared by `tally serve`'s `/mcp` and the gateway's
 * `--listen` side.
 */
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Most events one session keeps for replay. */
export const EVENTS_PER_SESSION = 1024;

/** A bounded in-memory event store for one session's SSE streams (resumability). */
export class SessionEvents implements EventStore {
  private readonly events: { id: string; stream: string; message: JSONRPCMessage }[] = [];
  private next = 0;
  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}_${++this.next}`;
    this.events.push({ id, stream: streamId, message });
    if (this.events.length > EVENTS_PER_SESSION) this.events.shift();
    return id;
  }
  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.events.find((e) => e.id === eventId)?.stream;
  }
  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const at = this.events.findIndex((e) => e.id === lastEventId);
    if (at === -1) return '';
    const stream = this.events[at]!.stream;
    for (const e of this.events.slice(at + 1)) if (e.stream === stream) await send(e.id, e.message);
    return stream;
  }
}
