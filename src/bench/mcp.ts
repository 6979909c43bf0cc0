/**
 * The MCP gateway's cost: `echo` calls per second from the SDK Client through
 * `tally mcp proxy` (the built CLI, the referee ruling every call; a memory
 * store — the gateway's own cost — and the durable SQLite default) against
 * the same calls direct to the same stdio upstream (server-everything), in
 * the same run, rounds interleaved — and through a bare relay (mcp-relay.ts:
 * the hop alone, the ceiling of any stdio proxy); and the p99 latency each way (the note
 * gives the proxy's added p99, and the medians: the rate is set by the mean,
 * which a few stalled calls on a loaded machine dominate; the median is the
 * steady per-call cost).
 * `TALLY_BENCH_MCP_CALLS` (default 400 per side).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Figure } from './core.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))]!;
}

/** Runs the section (see the module comment). */
export async function benchMcp(): Promise<Figure[]> {
  const server = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  const cli = join(root, 'dist/cli/main.js');
  const relay = join(root, 'dist/bench/mcp-relay.js');
  if (!existsSync(server)) throw new Error('skipped: @modelcontextprotocol/server-everything is not installed (a devDependency)');
  const [{ Client }, { StdioClientTransport }] = await Promise.all([import('@modelcontextprotocol/sdk/client/index.js'), import('@modelcontextprotocol/sdk/client/stdio.js')]);
  const calls = Number(process.env['TALLY_BENCH_MCP_CALLS'] ?? 400);
  const dir = mkdtempSync(join(tmpdir(), 'tally-bench-mcp-'));
  const connect = async (command: string[]) => {
    const c = new Client({ name: 'bench', version: '1' });
    await c.connect(new StdioClientTransport({ command: process.execPath, args: command, cwd: dir, stderr: 'ignore' }));
    return c;
  };
  const direct = await connect([server, 'stdio']);
  const proxy = (db: string) => connect([cli, 'mcp', 'proxy', '--db', db, '--', process.execPath, server, 'stdio']);
  // The hop alone (a bare relay, nothing recorded): the ceiling of any stdio proxy on this machine, same run.
  const hop = await connect([relay, process.execPath, server, 'stdio']);
  const sides = { direct, relay: hop, memory: await proxy('memory:'), sqlite: await proxy(join(dir, 'bench.db')) };
  type Side = keyof typeof sides;
  try {
    const lat: Record<Side, number[]> = { direct: [], relay: [], memory: [], sqlite: [] };
    const round = async (k: Side, n: number, record: boolean) => {
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        const r = await sides[k].callTool({ name: 'echo', arguments: { message: `call ${i}` } });
        const dt = performance.now() - t0;
        if (r.isError) throw new Error(`echo failed (${k}): ${JSON.stringify(r.content).slice(0, 200)}`);
        if (record) lat[k].push(dt);
      }
    };
    for (const k of Object.keys(sides) as Side[]) await round(k, 30, false);
    const per = Math.max(1, Math.floor(calls / 10));
    for (let r = 0; r < 10; r++) for (const k of Object.keys(sides) as Side[]) await round(k, per, true);
    const rate = (k: Side) => Math.round((lat[k].length / lat[k].reduce((a, b) => a + b, 0)) * 1000);
    const figure = (k: Exclude<Side, 'direct'>, name: string, extra: string): Figure => {
      const pd = quantile(lat.direct, 0.99);
      const pp = quantile(lat[k], 0.99);
      // The medians too: on a loaded machine a few stalled calls (of any process) set the mean; the median is the steady hop.
      const md = quantile(lat.direct, 0.5);
      const mp = quantile(lat[k], 0.5);
      return {
        name,
        perSecond: rate(k),
        baselineName: 'direct to the same stdio upstream',
        baselinePerSecond: rate('direct'),
        ratio: rate(k) / rate('direct'),
        note: `${lat[k].length} sequential calls; p99 ${pp.toFixed(2)} ms vs direct ${pd.toFixed(2)} ms: added p99 ${(pp - pd).toFixed(2)} ms; p50 ${mp.toFixed(2)} ms vs direct ${md.toFixed(2)} ms: added p50 ${(mp - md).toFixed(2)} ms, ratio of medians ${(md / mp).toFixed(3)}${extra}`,
      };
    };
    return [
      figure('relay', 'echo calls through a bare stdio relay (the process hop alone, nothing recorded: the ceiling)', ''),
      figure('memory', 'echo calls through tally mcp proxy --db memory: (referee, turn + frame per call)', ''),
      figure('sqlite', 'echo calls through tally mcp proxy, SQLite synchronous=FULL', '; two durable appends (fsync) per call: the turn before the call goes upstream, the result frame before the agent is answered'),
    ];
  } finally {
    for (const c of Object.values(sides)) await c.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
