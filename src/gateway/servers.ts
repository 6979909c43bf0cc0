/**
 * The gateway's upstream servers (docs/PROTOCOL.md §18.1, §18.6): one unnamed
 * upstream whose tools the agent sees under their own names, or one or more
 * named upstreams whose tools it sees as `<name>__<tool>`. Each holds its
 * `initialize` result, its tool list and whether it announced
 * `tools/list_changed` since the last frame, so only that one is re-read.
 */
import { namespacedTool, splitToolName, UPSTREAM_NAME } from '../referee/tool-names.js';
import { openFrameData, record } from './frames.js';
import type { Upstream } from './upstream.js';
import type { CanonicalObject } from '../protocol/index.js';

/** An upstream with the name its tools are offered under. */
export interface NamedUpstream {
  readonly name: string;
  readonly upstream: Upstream;
}

/** One upstream's state in a day. */
export interface ServerState {
  /** `undefined` for the one unnamed upstream. */
  readonly name: string | undefined;
  readonly upstream: Upstream;
  initialize: Record<string, unknown>;
  tools: unknown[];
  changed: boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks the names: each an upstream name, no two alike, at least one. */
export function checkUpstreamNames(ups: readonly NamedUpstream[]): string | undefined {
  if (ups.length === 0) return 'give at least one upstream';
  const seen = new Set<string>();
  for (const u of ups) {
    if (!UPSTREAM_NAME.test(u.name)) return `upstream name "${u.name.slice(0, 40)}" must be 1–32 of a-z, 0-9 and -, starting with a letter or digit`;
    if (seen.has(u.name)) return `upstream name "${u.name}" is given twice`;
    seen.add(u.name);
  }
  return undefined;
}

/** The serverInfo name of an initialize result. */
export function serverName(init: Record<string, unknown>): string {
  const info = init['serverInfo'];
  return isObject(info) && typeof info['name'] === 'string' ? info['name'] : 'unknown';
}

/** The tools the agent sees: each upstream's, named by §18.6 when the upstreams are named. */
export function agentTools(servers: readonly ServerState[]): unknown[] {
  if (servers.length === 1 && servers[0]!.name === undefined) return servers[0]!.tools;
  const out: unknown[] = [];
  for (const s of servers) for (const t of s.tools) out.push(isObject(t) && typeof t['name'] === 'string' ? { ...t, name: namespacedTool(s.name!, t['name']) } : t);
  return out;
}

/** Which upstream serves the agent's tool `name`, and the upstream's own name for it. */
export function routeCall(servers: readonly ServerState[], name: string): { readonly server: ServerState; readonly tool: string } | undefined {
  if (servers.length === 1 && servers[0]!.name === undefined) return { server: servers[0]!, tool: name };
  const split = splitToolName(name);
  const server = split === undefined ? undefined : servers.find((s) => s.name === split.server);
  return server === undefined ? undefined : { server, tool: split!.tool };
}

/** The OPEN frame's data (§18.1; named upstreams §18.6). */
export function openData(servers: readonly ServerState[]): CanonicalObject {
  const one = servers[0]!;
  if (servers.length === 1 && one.name === undefined) return openFrameData(serverName(one.initialize), one.initialize, one.tools);
  const members: Record<string, CanonicalObject> = {};
  for (const s of servers) members[s.name!] = { server: serverName(s.initialize), ...record('initialize', s.initialize), ...record('tools', s.tools) };
  return { kind: 'mcp-open', servers: members };
}

/** The tool lists re-read since the last frame, as a tool-result frame's members (`tools`, or `servers` when named). */
export function changedData(servers: readonly ServerState[], reread: readonly ServerState[]): CanonicalObject {
  if (reread.length === 0) return {};
  if (servers.length === 1 && servers[0]!.name === undefined) return record('tools', reread[0]!.tools);
  const members: Record<string, CanonicalObject> = {};
  for (const s of reread) members[s.name!] = record('tools', s.tools);
  return { servers: members };
}
