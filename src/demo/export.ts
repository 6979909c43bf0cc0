/**
 * Writes a session's entries to a bundle file (JSON Lines), in 1 MiB writes
 * that respect back-pressure; `onEntry` is told how many entries are written.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Engine } from '../session/index.js';

export async function exportBundle(engine: Engine, sessionId: string, path: string, onEntry: (n: number) => void = () => undefined): Promise<void> {
  const out = createWriteStream(path);
  const closed = once(out, 'close');
  const failed = new Promise<never>((_, reject) => out.once('error', reject));
  let n = 0;
  let chunk: Uint8Array[] = [];
  let bytes = 0;
  const flush = async () => {
    if (chunk.length === 0) return;
    const buf = Buffer.concat(chunk, bytes);
    chunk = [];
    bytes = 0;
    if (!out.write(buf)) await Promise.race([once(out, 'drain'), failed]);
  };
  const nl = new Uint8Array([0x0a]);
  for await (const line of engine.exportEntries(sessionId)) {
    chunk.push(line, nl);
    bytes += line.length + 1;
    n++;
    if (bytes >= 1 << 20) {
      await flush();
      onEntry(n);
    }
  }
  await flush();
  out.end();
  await Promise.race([closed, failed]);
}
