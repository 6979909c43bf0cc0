/**
 * C2SP tlog-tiles, the pure part: resource paths (`tile/<L>/<N>[.p/<W>]`,
 * `tile/entries/<N>[.p/<W>]`), which tiles a tree of a given size has, the
 * bytes of a hash tile and of an entry bundle (docs/PROTOCOL.md §15.3).
 *
 * - A tile at level L, index N holds the hashes `MTH(D[(N·256+i)·256^L :
 *   (N·256+i+1)·256^L])`, i from 0 to W−1, concatenated (32 bytes each): the
 *   perfect subtrees of height 8L, read from a {@link NodeReader}.
 * - A full tile is 256 hashes wide; the partial tile at level L of a tree of
 *   size s has `floor(s / 256^L) mod 256` hashes; an empty tile does not exist.
 * - N is written as zero-padded 3-digit elements, all but the last prefixed
 *   `x` (1234067 → `x001/x234/067`); W (1 to 255) and L (0 to 63) in plain
 *   decimal without leading zeros.
 * - An entry bundle is its entries, each as a big-endian uint16 length and
 *   the bytes.
 */
import type { NodeReader } from '../merkle/node-reader.js';

/** Hashes in a full tile. */
export const TILE_WIDTH = 256;
/** Tree levels a tile spans. */
export const TILE_HEIGHT = 8;
/** The largest entry an entry bundle can hold (uint16 length). */
export const ENTRY_MAX_BYTES = 0xffff;

/** One tlog-tiles resource: a hash tile (`level` 0 to 63) or an entry bundle. `width` 256 is a full tile. */
export type TileRef = { readonly kind: 'hash'; readonly level: number; readonly index: number; readonly width: number } | { readonly kind: 'entries'; readonly index: number; readonly width: number };

/** `N` as 3-digit path elements: 1234067 → `x001/x234/067`. */
export function tileIndexPath(index: number): string {
  if (!Number.isSafeInteger(index) || index < 0) throw new RangeError(`tile index must be a non-negative safe integer, got ${String(index)}`);
  let n = index;
  let out = String(n % 1000).padStart(3, '0');
  n = Math.floor(n / 1000);
  while (n > 0) {
    out = `x${String(n % 1000).padStart(3, '0')}/${out}`;
    n = Math.floor(n / 1000);
  }
  return out;
}

/** The path of `ref` below the log's prefix (no leading slash), e.g. `tile/0/x001/234.p/7`. */
export function tilePath(ref: TileRef): string {
  if (!Number.isInteger(ref.width) || ref.width < 1 || ref.width > TILE_WIDTH) throw new RangeError(`tile width must be 1 to 256, got ${String(ref.width)}`);
  const tail = ref.width === TILE_WIDTH ? '' : `.p/${ref.width}`;
  if (ref.kind === 'entries') return `tile/entries/${tileIndexPath(ref.index)}${tail}`;
  if (!Number.isInteger(ref.level) || ref.level < 0 || ref.level > 63) throw new RangeError(`tile level must be 0 to 63, got ${String(ref.level)}`);
  return `tile/${ref.level}/${tileIndexPath(ref.index)}${tail}`;
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/**
 * Reads a path below the prefix (`tile/…`) in the one spelling the spec
 * allows, or `undefined`: leading zeros, a missing `x`, an `x` on the last
 * element, a width of 0 or 256 written as `.p/`, a level above 63 — all refused.
 */
export function parseTilePath(path: string): TileRef | undefined {
  if (typeof path !== 'string' || !path.startsWith('tile/')) return undefined;
  let rest = path.slice(5);
  let width = TILE_WIDTH;
  const p = rest.lastIndexOf('.p/');
  if (p >= 0) {
    const w = rest.slice(p + 3);
    if (!DECIMAL.test(w)) return undefined;
    width = Number(w);
    if (width < 1 || width > 255) return undefined;
    rest = rest.slice(0, p);
  }
  const parts = rest.split('/');
  const head = parts.shift();
  if (head === undefined || parts.length === 0 || parts.length > 6) return undefined;
  let index = 0;
  for (let i = 0; i < parts.length; i++) {
    const last = i === parts.length - 1;
    const el = parts[i]!;
    const digits = last ? el : el.startsWith('x') ? el.slice(1) : '';
    if (!/^[0-9]{3}$/.test(digits)) return undefined;
    index = index * 1000 + Number(digits);
  }
  // The first element of a multi-element index carries a value (x000/… would be a second spelling).
  if (parts.length > 1 && parts[0] === 'x000') return undefined;
  if (!Number.isSafeInteger(index)) return undefined;
  if (head === 'entries') return { kind: 'entries', index, width };
  if (!DECIMAL.test(head)) return undefined;
  const level = Number(head);
  if (level > 63) return undefined;
  return { kind: 'hash', level, index, width };
}

/** `256^level` leaves per hash of a level-`level` tile. */
function span(level: number): number {
  return TILE_WIDTH ** level;
}

/**
 * Every hash tile and entry bundle of a tree of `size` leaves: the full ones
 * and, per level, the partial one (if its width is not 0), level by level.
 */
export function tilesForSize(size: number): TileRef[] {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`size must be a non-negative safe integer, got ${String(size)}`);
  const out: TileRef[] = [];
  for (let level = 0; Math.floor(size / span(level)) > 0; level++) {
    const hashes = Math.floor(size / span(level));
    const full = Math.floor(hashes / TILE_WIDTH);
    const partial = hashes % TILE_WIDTH;
    for (let index = 0; index < full; index++) out.push({ kind: 'hash', level, index, width: TILE_WIDTH });
    if (partial > 0) out.push({ kind: 'hash', level, index: full, width: partial });
    if (level === 0) {
      for (let index = 0; index < full; index++) out.push({ kind: 'entries', index, width: TILE_WIDTH });
      if (partial > 0) out.push({ kind: 'entries', index: full, width: partial });
    }
  }
  return out;
}

/**
 * Whether a tree of `size` leaves has the tile `ref`: a full tile once it is
 * complete, a partial one only at exactly the width this size gives it.
 */
export function tileExists(ref: TileRef, size: number): boolean {
  const level = ref.kind === 'entries' ? 0 : ref.level;
  const hashes = Math.floor(size / span(level));
  const full = Math.floor(hashes / TILE_WIDTH);
  if (ref.width === TILE_WIDTH) return ref.index < full;
  return ref.index === full && ref.width === hashes % TILE_WIDTH;
}

/** The bytes of hash tile (`level`, `index`, `width`): the `width` subtree hashes of height 8·level, concatenated. */
export function tileHashes(reader: NodeReader, level: number, index: number, width: number): Uint8Array {
  const out = new Uint8Array(width * 32);
  for (let i = 0; i < width; i++) out.set(reader.node(TILE_HEIGHT * level, index * TILE_WIDTH + i), i * 32);
  return out;
}

/** An entry bundle: each entry as big-endian uint16 length ‖ bytes. Throws `RangeError` for an entry over 65535 bytes. */
export function entryBundle(entries: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const e of entries) {
    if (e.length > ENTRY_MAX_BYTES) throw new RangeError(`an entry bundle holds entries of at most 65535 bytes, got ${e.length}`);
    n += 2 + e.length;
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const e of entries) {
    out[at] = e.length >>> 8;
    out[at + 1] = e.length & 0xff;
    out.set(e, at + 2);
    at += 2 + e.length;
  }
  return out;
}

/** The entries of a bundle, or `undefined` when the bytes are not a sequence of length-prefixed entries. */
export function parseEntryBundle(bytes: Uint8Array): Uint8Array[] | undefined {
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 2 > bytes.length) return undefined;
    const n = (bytes[at]! << 8) | bytes[at + 1]!;
    if (at + 2 + n > bytes.length) return undefined;
    out.push(bytes.slice(at + 2, at + 2 + n));
    at += 2 + n;
  }
  return out;
}
