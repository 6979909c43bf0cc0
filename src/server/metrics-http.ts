/**
 * `tally serve --metrics-bind <host:port>`: a second, unauthenticated listener
 * that answers only `GET /metrics` (Prometheus text), for a scraper on a
 * private network. The main server keeps `/metrics` behind an auditor token.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Renders the metrics in the Prometheus text format. */
export type MetricsRenderer = () => Promise<string>;

/** The content type of the Prometheus text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * Starts the metrics listener; resolves with its URL once listening.
 *
 * @example
 * const m = await listenMetrics(render, 9464, '127.0.0.1');
 * // scrape `${m.url}/metrics`; m.server.close() to stop
 */
export function listenMetrics(render: MetricsRenderer, port: number, host: string): Promise<{ readonly server: Server; readonly url: string }> {
  const server = createServer({ requestTimeout: 10_000 }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('only GET /metrics is served here\n');
      return;
    }
    render().then(
      (text) => {
        const body = Buffer.from(text, 'utf8');
        res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'content-length': String(body.length), 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics collection failed\n'),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const a = server.address() as AddressInfo;
      const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
      resolve({ server, url: `http://${h}:${a.port}` });
    });
  });
}
