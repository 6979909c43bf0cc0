/** `replay` over a bundle file streamed from disk (Node only; the pure replay is ./replay.ts). */
import { bundleFileChunks } from '../proof/bundle.js';
import { replay } from './replay-disk.js';
import type { ReplayOptions, ReplayResult } from './types.js';

/**
 * {@link replay} over a bundle file, streamed from disk.
 *
 * @example
 * const r = await replayFile('day.jsonl');
 */
export function replayFile(path: string, options: ReplayOptions = {}): Promise<ReplayResult> {
  return replay(bundleFileChunks(path), options);
}
