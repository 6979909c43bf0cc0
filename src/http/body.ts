/**
 * Request bodies under a server's size limit: read one whole (`POST /rpc`),
 * or discard one that will not be read so the connection stays usable.
 */
import type { IncomingMessage } from 'node:http';

/** A body read whole, or why it was not: larger than the limit, or the client went away. */
export type BodyRead = Uint8Array | 'too-large' | 'aborted';

/**
 * Reads a request body of at most `max` bytes (a larger declared
 * `content-length` is refused before reading).
 */
export function readBody(req: IncomingMessage, max: number): Promise<BodyRead> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > max) return Promise.resolve('too-large');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const settle = (v: BodyRead): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('aborted', onAbort);
      resolve(v);
    };
    const onData = (c: Buffer): void => {
      total += c.length;
      if (total > max) settle('too-large');
      else chunks.push(c);
    };
    const onEnd = (): void => settle(Buffer.concat(chunks, total));
    const onAbort = (): void => settle('aborted');
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('aborted', onAbort);
  });
}

/** Discards a body we will not read (so the connection stays usable), cutting it beyond 16× `maxBodyBytes`. */
export function drainBody(req: IncomingMessage, maxBodyBytes: number): void {
  if (req.readableEnded || req.method === 'GET' || req.method === 'HEAD') return;
  let seen = 0;
  const cap = maxBodyBytes * 16;
  req.on('data', (c: Buffer) => {
    seen += c.length;
    if (seen > cap) req.socket.destroy();
  });
  req.resume();
}
