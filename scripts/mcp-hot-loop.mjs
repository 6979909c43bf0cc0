// The gateway's per-call CPU in one hot process (issue 32): a Gateway on a memory store over an
// instant in-process upstream (an `echo` tool), `process.cpuUsage()` over N sequential calls.
// Usage: node scripts/mcp-hot-loop.mjs [distDir=dist] [calls=3000] [reps=5] [mandate=0|1]
// Give two dist dirs (comma-separated) to A/B them in one process, interleaved.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dirs = 'dist', callsArg = '3000', repsArg = '5'] = process.argv.slice(2);
const calls = Number(callsArg);
const reps = Number(repsArg);

async function load(dir) {
  const m = (p) => import(pathToFileURL(resolve(dir, p)).href);
  const [{ Gateway }, { Engine }, { MemoryStore }, { createRefereeRuler }] = await Promise.all([m('gateway/index.js'), m('session/index.js'), m('store/memory.js'), m('referee/ruler.js')]);
  return { Gateway, Engine, MemoryStore, createRefereeRuler };
}

function instantUpstream() {
  return {
    down: undefined,
    onnotification: undefined,
    async start() {},
    async notify() {},
    async request(method, params) {
      if (method === 'initialize') return { kind: 'result', result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'instant', version: '1' } } };
      if (method === 'tools/list') return { kind: 'result', result: { tools: [{ name: 'echo', description: 'Echoes back the input', inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } }] } };
      return { kind: 'result', result: { content: [{ type: 'text', text: `Echo: ${params.arguments.message}` }] } };
    },
  };
}

let run = 0;
async function oneRun(lib) {
  const store = new lib.MemoryStore();
  const engine = new lib.Engine({ store, ruler: lib.createRefereeRuler({ store }) });
  const gateway = new lib.Gateway({ engine, upstream: instantUpstream(), spec: { name: 'hot-loop', mcp: { run: `${process.pid}-${++run}` } }, timeoutMs: 10_000 });
  await gateway.start();
  for (let i = 0; i < 200; i++) await gateway.handle({ jsonrpc: '2.0', id: `w${i}`, method: 'tools/call', params: { name: 'echo', arguments: { message: `warm ${i}` } } });
  const t0 = process.cpuUsage();
  const w0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    const r = await gateway.handle({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { message: `hello ${i}` } } });
    if (r.result === undefined || r.result.isError) throw new Error(`call ${i}: ${JSON.stringify(r)}`);
  }
  const d = process.cpuUsage(t0);
  const wall = Number(process.hrtime.bigint() - w0) / 1e3;
  await gateway.finish('agent-disconnected');
  return { cpu: (d.user + d.system) / calls, wall: wall / calls };
}

const libs = [];
for (const d of dirs.split(',')) libs.push([d, await load(d)]);
const results = new Map(libs.map(([d]) => [d, []]));
for (let r = 0; r < reps; r++) for (const [d, lib] of libs) results.get(d).push(await oneRun(lib));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [d, rs] of results) {
  console.log(`${d}: CPU µs/call ${rs.map((x) => x.cpu.toFixed(0)).join(' ')} (median ${median(rs.map((x) => x.cpu)).toFixed(0)}); wall µs/call median ${median(rs.map((x) => x.wall)).toFixed(0)}`);
}
