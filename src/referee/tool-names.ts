/**
 * How a gateway with several upstream MCP servers names their tools to the
 * agent (docs/PROTOCOL.md §18.6): each upstream has a name of 1–32 characters
 * from `[a-z0-9-]`, and its tool `t` is offered as `<name>__<t>`. The name
 * has no `_`, so the first `__` of an offered name always splits it back into
 * the server and the upstream's own tool name. The gateway (to route a call)
 * and the referee (to rule it, and on replay) read names through this one
 * rule.
 */

/** The separator between an upstream's name and its tool's name. */
export const TOOL_NAMESPACE_SEPARATOR = '__';

/** An upstream name: 1–32 of `a-z`, `0-9`, `-`, starting with a letter or digit. */
export const UPSTREAM_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** The name the agent sees for tool `tool` of upstream `server`. */
export function namespacedTool(server: string, tool: string): string {
  return `${server}${TOOL_NAMESPACE_SEPARATOR}${tool}`;
}

/** Splits an offered name at its first `__` into `{server, tool}`; `undefined` when it has none or the server part is not an upstream name. */
export function splitToolName(name: string): { readonly server: string; readonly tool: string } | undefined {
  const i = name.indexOf(TOOL_NAMESPACE_SEPARATOR);
  if (i <= 0) return undefined;
  const server = name.slice(0, i);
  const tool = name.slice(i + TOOL_NAMESPACE_SEPARATOR.length);
  if (!UPSTREAM_NAME.test(server) || tool.length === 0) return undefined;
  return { server, tool };
}
