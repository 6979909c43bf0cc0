/**
 * Re-links a bundle after one line's bytes were replaced: every later entry
 * gets the new session id and parent hashes, and the seal the new size and
 * root, all computed from the RAW bytes of the lines (what a forger would do
 * so that only the encoding of the replaced line is wrong).
 */
import { sha256 } from '../../src/codec/index.js';
import { canonicalBytes, entryHash, rfc6962Hasher, rootFromLeafHashes, toHex, type CanonicalObject } from '../../src/protocol/index.js';

const dec = new TextDecoder();

/** Lines (without newlines) with line `at` replaced by `raw` and every later line re-linked. */
export function relink(lines: readonly Uint8Array[], at: number, raw: Uint8Array): Uint8Array[] {
  const out = lines.slice(0, at);
  out.push(raw);
  const hashes = out.map((l) => entryHash(sha256, l));
  const session = toHex(hashes[0]!);
  for (let i = at + 1; i < lines.length; i++) {
    const v = JSON.parse(dec.decode(lines[i]!)) as Record<string, unknown>;
    v['session'] = session;
    v['parent'] = toHex(hashes[i - 1]!);
    if (v['kind'] === 'finalize') v['root'] = toHex(rootFromLeafHashes(rfc6962Hasher(sha256), hashes));
    const bytes = canonicalBytes(v as CanonicalObject);
    out.push(bytes);
    hashes.push(entryHash(sha256, bytes));
  }
  return out;
}
