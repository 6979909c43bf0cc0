/**
 * The upstreams of `tally mcp proxy`: `-- <command…>` or `--upstream-url <url>`
 * (one unnamed upstream, its tools under their own names), or any number of
 * `--upstream <name>=<command…>` and `--upstream-url <name>=<url>` (named
 * upstreams, tools offered as `<name>__<tool>`, docs/PROTOCOL.md §18.6).
 */
import { CliError } from '../command.js';
import { UPSTREAM_NAME } from '../../referee/tool-names.js';

/** One upstream as the command line gave it. */
export type UpstreamArg = { readonly name: string | undefined } & ({ readonly kind: 'command'; readonly argv: readonly string[] } | { readonly kind: 'url'; readonly url: URL });

function list(v: unknown): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
}

/** Splits a command at spaces; '…' and "…" group (no escapes inside). */
export function splitCommand(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quote: string | undefined;
  let any = false;
  for (const ch of text) {
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      else cur += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      any = true;
    } else if (ch === ' ' || ch === '\t') {
      if (cur !== '' || any) out.push(cur);
      cur = '';
      any = false;
    } else cur += ch;
  }
  if (quote !== undefined) throw new CliError(`unbalanced ${quote} in the upstream command: ${text.slice(0, 100)}`);
  if (cur !== '' || any) out.push(cur);
  return out;
}

function httpUrl(text: string, flag: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError(`${flag} must be an http(s) URL, got ${text.slice(0, 100)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`${flag} must be an http(s) URL`);
  return url;
}

function named(text: string, flag: string): { name: string; rest: string } {
  const i = text.indexOf('=');
  const name = i < 0 ? '' : text.slice(0, i);
  if (!UPSTREAM_NAME.test(name)) throw new CliError(`${flag} must be <name>=…, the name 1–32 of a-z, 0-9 and - (got ${text.slice(0, 60)})`);
  return { name, rest: text.slice(i + 1) };
}

/** Reads the upstreams from the options and the command after `--`. */
export function upstreamArgs(values: Record<string, unknown>, command: readonly string[]): UpstreamArg[] {
  const cmds = list(values['upstream']);
  const urls = list(values['upstream-url']);
  const unnamedUrl = urls.length === 1 && !/^[a-z0-9][a-z0-9-]{0,31}=/.test(urls[0]!);
  if (cmds.length === 0 && (urls.length === 0 || unnamedUrl)) {
    if (command.length === 0 && urls.length === 0) throw new CliError("give the upstream server's command after -- (tally mcp proxy --db <store> -- <command…>), --upstream-url <url>, or --upstream <name>=<command…> (repeatable)");
    if (command.length > 0 && urls.length > 0) throw new CliError('give either an upstream command after -- or --upstream-url, not both');
    return [command.length > 0 ? { name: undefined, kind: 'command', argv: command } : { name: undefined, kind: 'url', url: httpUrl(urls[0]!, '--upstream-url') }];
  }
  if (command.length > 0) throw new CliError('with named upstreams (--upstream <name>=…), give every upstream that way, not after --');
  const out: UpstreamArg[] = [];
  for (const c of cmds) {
    const { name, rest } = named(c, '--upstream');
    const argv = splitCommand(rest);
    if (argv.length === 0) throw new CliError(`--upstream ${name}= needs a command`);
    out.push({ name, kind: 'command', argv });
  }
  for (const u of urls) {
    const { name, rest } = named(u, '--upstream-url');
    out.push({ name, kind: 'url', url: httpUrl(rest, '--upstream-url') });
  }
  const seen = new Set<string>();
  for (const u of out) {
    if (seen.has(u.name!)) throw new CliError(`upstream name "${u.name}" is given twice`);
    seen.add(u.name!);
  }
  return out;
}

/** The spec's `mcp.upstream` (at most 200 characters) for these upstreams. */
export function upstreamLabel(ups: readonly UpstreamArg[]): string {
  const one = (u: UpstreamArg): string => (u.kind === 'url' ? u.url.href : u.argv.join(' '));
  const text = ups.length === 1 && ups[0]!.name === undefined ? one(ups[0]!) : ups.map((u) => `${u.name}=${one(u)}`).join(' ; ');
  return text.slice(0, 200);
}
