// A local EVM for the x402 tests: Hardhat 3's simulated network (EDR, chain id 31337, the 20
// public test accounts) served as JSON-RPC over HTTP on 127.0.0.1 at an ephemeral port.
// Hardhat's own `hardhat node` command refuses Node 20, while its network runs there, so this
// process serves the provider itself. It prints `listening <port>` once, and exits when its
// parent closes stdin (so a killed test leaves no chain behind) or on SIGTERM.
import { createServer } from 'node:http';
import { createHardhatRuntimeEnvironment } from 'hardhat/hre';

const hre = await createHardhatRuntimeEnvironment({}, {}, process.cwd());
const { provider } = await hre.network.connect();

async function answer(call) {
  const id = call?.id ?? null;
  try {
    const result = await provider.request({ method: call.method, params: call.params ?? [] });
    return { jsonrpc: '2.0', id, result: result ?? null };
  } catch (e) {
    const data = e?.data;
    return { jsonrpc: '2.0', id, error: { code: typeof e?.code === 'number' ? e.code : -32603, message: String(e?.message ?? e), ...(data === undefined ? {} : { data }) } };
  }
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    const out = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
    const text = JSON.stringify(out, (_k, v) => (typeof v === 'bigint' ? `0x${v.toString(16)}` : v));
    res.writeHead(200, { 'content-type': 'application/json' }).end(text);
  });
});
server.keepAliveTimeout = 1000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));

const stop = () => server.close(() => process.exit(0)) && setTimeout(() => process.exit(0), 500).unref();
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
