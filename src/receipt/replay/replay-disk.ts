/**
 * `replay` for Node: the re-derived day goes into a scratch store on disk by
 * default, so memory stays bounded however long the day (the browser-safe core
 * is ./replay.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BundleChunks } from '../proof/bundle.js';
import { replayInMemory, replayInto } from './replay.js';
import type { ReplayOptions, ReplayResult } from './types.js';

/**
 * Re-derives every ruling of a sealed transcript from the transcript alone
 * ({@link replayInto} says how). Memory: the chain verifier holds an O(log n)
 * frontier, the engine one session's state, the ruler its fold (the referee's
 * quota and live tickets); what grows with the day — the re-derived entries,
 * their slots and nonce reservations — is kept by the scratch store, on disk by
 * default (`options.scratch`), so a million-entry day replays in bounded memory.
 *
 * @example
 * const r = await replay([bundleBytes]);
 * if (!r.ok && r.stage === 'replay') console.error(r.divergences[0]?.index, r.divergences[0]?.kind);
 */
export async function replay(chunks: BundleChunks, options: ReplayOptions = {}): Promise<ReplayResult> {
  if (options.scratch === 'memory') return replayInMemory(chunks, options);
  // Loaded on use: importing the receipt layer does not load the native SQLite binding.
  const { ScratchStore } = await import('../../store/scratch.js');
  const dir = mkdtempSync(join(options.scratchDir ?? tmpdir(), 'tally-replay-'));
  try {
    const store = new ScratchStore(join(dir, 'replay.db'));
    try {
      return await replayInto(store, chunks, options);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
