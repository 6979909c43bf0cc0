/** Readers the tiles tests use: the protocol's tree math and entry bundles, and a strict checkpoint text parse. */
import { parseCheckpoint, type Checkpoint } from '../../src/receipt/index.js';
export { entryHash, parseEntryBundle, rfc6962Hasher, rootFromLeafHashes, toHex } from '../../src/protocol/index.js';

export function parseCheckpointText(text: string): Checkpoint {
  const r = parseCheckpoint(text);
  if (!r.ok) throw new Error(r.message);
  return r.checkpoint;
}
