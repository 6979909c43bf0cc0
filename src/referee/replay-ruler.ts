/**
 * Which ruler re-derives a day's rulings: the one choice `tally replay` and
 * the audit page both make, so the page replays with exactly the CLI's ruler.
 * `auto` is the referee when the genesis spec seals a mandate, else the
 * intent ruler. Recorded judge evidence is re-verified by the referee, never
 * re-asked: no judge is configured here.
 */
import { createIntentRuler } from '../rules/intent.js';
import type { TurnRuler } from '../session/index.js';
import type { TranscriptStore } from '../store/types.js';
import { createRefereeRuler } from './ruler.js';

/** The `--ruler` values of `tally replay`. */
export const REPLAY_RULERS = ['auto', 'intent', 'referee', 'none'] as const;
/** One of {@link REPLAY_RULERS}. */
export type ReplayRulerChoice = (typeof REPLAY_RULERS)[number];

/**
 * True when a genesis `spec` is ruled by the referee: it seals a mandate (its
 * `mandate` member is present) or is a gateway day (its `mcp` member is: every
 * tool call is ruled, mandate or not; docs/PROTOCOL.md §18).
 */
export function specSealsMandate(spec: unknown): boolean {
  return typeof spec === 'object' && spec !== null && !Array.isArray(spec) && ((spec as { mandate?: unknown }).mandate !== undefined || (spec as { mcp?: unknown }).mcp !== undefined);
}

/** The ruler `replay` takes (`ReplayOptions['ruler']`) and its name, for a choice and whether the spec seals a mandate. */
export function replayRuler(choice: ReplayRulerChoice, sealsMandate: boolean): { readonly name: 'intent' | 'referee' | 'none'; readonly ruler: TurnRuler | ((store: TranscriptStore) => TurnRuler) | null } {
  if (choice === 'none') return { name: 'none', ruler: null };
  // A replay also re-derives days sealed before mandates were signed (version 1), as they were ruled.
  if (choice === 'referee' || (choice === 'auto' && sealsMandate)) return { name: 'referee', ruler: (store) => createRefereeRuler({ store, legacyMandates: true }) };
  return { name: 'intent', ruler: createIntentRuler() };
}
