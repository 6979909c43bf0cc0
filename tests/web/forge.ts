/** Bundles forged for the desk's tests: self-consistent, so only a signed checkpoint or replay catches them. */
import { sha256 } from '../../src/codec/index.js';
import { canonicalJson, entryHash, rfc6962Hasher, rootFromLeafHashes, toHex, type CanonicalValue } from '../../src/protocol/index.js';

/**
 * Edits the quota cap of the `nth` turn carrying a ruling and re-seals: every
 * hash, link and the seal recomputed, so only a signed checkpoint (or replay)
 * can tell.
 */
export function resealedForgery(lines: string[], nth = 0): Buffer {
  const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const ruled = entries.flatMap((e, i) => (e['kind'] === 'turn' && typeof e['ruling'] === 'object' && typeof (e['ruling'] as Record<string, unknown>)['quota'] === 'object' ? [i] : []));
  return resealedEdit(entries, ruled[nth]!, (e) => {
    ((e['ruling'] as Record<string, Record<string, unknown>>)['quota']!)['cap'] = '999999';
  });
}

/** Applies `edit` to entry `k` of `entries` (parsed lines) and re-seals: every later hash, link and the seal recomputed. */
export function resealedEdit(entries: Record<string, unknown>[], k: number, edit: (e: Record<string, unknown>) => void): Buffer {
  edit(entries[k]!);
  const hashes: Uint8Array[] = [];
  const out: string[] = [];
  entries.forEach((e, i) => {
    if (i > 0 && i >= k) e['parent'] = toHex(hashes[i - 1]!);
    if (e['kind'] === 'finalize') e['root'] = toHex(rootFromLeafHashes(rfc6962Hasher(sha256), hashes));
    const text = canonicalJson(e as CanonicalValue);
    out.push(text);
    hashes.push(entryHash(sha256, new TextEncoder().encode(text)));
  });
  return Buffer.from(out.map((l) => `${l}\n`).join(''));
}

