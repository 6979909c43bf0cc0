/**
 * The wire benchmark's limit: a minimal node:http JSON-RPC server that parses
 * each POST body and answers a fixed result of the same shape as a frame's or
 * a turn's. Run as its own process; prints its URL on stdout.
 */
import { createServer } from 'node:http';

const HASH = 'ab'.repeat(32);

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    let id: unknown = null;
    try {
      id = (JSON.parse(Buffer.concat(parts).toString('utf8')) as { id?: unknown }).id ?? null;
    } catch {
      // answered below with the same shape; the bench sends only valid JSON
    }
    const body = JSON.stringify({ jsonrpc: '2.0', id, result: { sessionId: HASH, entryHash: HASH, frameRoot: HASH, index: 1, duplicate: false } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  if (a === null || typeof a === 'string') throw new Error('no address');
  process.stdout.write(`listening on http://127.0.0.1:${a.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
