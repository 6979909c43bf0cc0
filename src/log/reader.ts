/**
 * Reading the engine log through its tlog-tiles API (docs/PROTOCOL.md
 * §15.4): a signed log checkpoint opened with the pinned log key (named as
 * its origin), and the leaves up to a size, bundle by bundle, with their
 * RFC 6962 tree. Shared by the monitor (§15.7) and the verifier's log check
 * (§15.10).
 */
import { MerkleLevels, parseEntryBundle, tilePath, toHex, TILE_WIDTH } from '../protocol/index.js';
import { entryLeafHash } from '../receipt/bytes.js';
import { parseCheckpoint } from '../receipt/checkpoint/checkpoint.js';
import { openNote } from '../receipt/note/open.js';
import type { NoteVerifier } from '../receipt/note/types.js';
import { receiptHasher } from '../receipt/session/trees.js';
import type { LogSource } from './source.js';

/** A signed log checkpoint, opened. */
export interface HeldLogCheckpoint {
  readonly size: number;
  /** Root, 64 lowercase hex. */
  readonly root: string;
  readonly signedCheckpoint: string;
}

/** Opens a log checkpoint: signed by a pinned log key named as its origin, and a tlog-checkpoint. */
export function openLogCheckpoint(text: string, verifiers: readonly (NoteVerifier | string)[]): { readonly ok: true; readonly cp: HeldLogCheckpoint } | { readonly ok: false; readonly message: string } {
  const o = openNote(text, verifiers);
  if (!o.ok) return { ok: false, message: `not signed by the log key: ${o.code}: ${o.message}` };
  const c = parseCheckpoint(o.text);
  if (!c.ok) return { ok: false, message: `not a tlog-checkpoint: ${c.code}: ${c.message}` };
  if (!o.verified.some((s) => s.name === c.checkpoint.origin)) return { ok: false, message: `the origin ${JSON.stringify(c.checkpoint.origin)} is not the name of the log key that signed it` };
  return { ok: true, cp: { size: c.checkpoint.size, root: toHex(c.checkpoint.root), signedCheckpoint: text } };
}

/** Outcome of {@link LogReader.readTo}. */
export type ReadToResult = { readonly ok: true } | { readonly ok: false; readonly kind: 'unavailable' | 'bad-log'; readonly message: string };

/** The leaves of the log read so far, and their tree. */
export class LogReader {
  readonly tree = new MerkleLevels(receiptHasher);
  readonly leaves: Uint8Array[] = [];

  constructor(private readonly source: LogSource) {}

  /** Reads the leaves not held yet up to `size` (entry bundles as the spec's paths give them at that size). */
  async readTo(size: number): Promise<ReadToResult> {
    while (this.leaves.length < size) {
      const index = Math.floor(this.leaves.length / TILE_WIDTH);
      const width = Math.min(TILE_WIDTH, size - index * TILE_WIDTH);
      const path = tilePath({ kind: 'entries', index, width });
      const b = await this.source(path);
      if (!b.ok) return { ok: false, kind: 'unavailable', message: `could not read the entries up to ${size} (have ${this.leaves.length}): ${b.message}` };
      const entries = parseEntryBundle(b.body);
      if (entries === undefined || entries.length !== width) return { ok: false, kind: 'bad-log', message: `${path} is not an entry bundle of ${width} entries` };
      for (let i = this.leaves.length - index * TILE_WIDTH; i < width; i++) {
        this.tree.append(entryLeafHash(entries[i]!));
        this.leaves.push(entries[i]!);
      }
    }
    return { ok: true };
  }

  /** The root of the first `size` leaves read (64 lowercase hex). */
  root(size: number): string {
    return toHex(this.tree.root(size));
  }
}
