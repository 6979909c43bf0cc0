/**
 * Which ruler re-derives a day's rulings, from its genesis spec: the one
 * choice `tally replay` and the grader's page both make, so the page replays
 * with exactly the CLI's ruler. `auto` is the x402 payment referee over the
 * referee when the spec seals a payment policy (`spec.payments`, PROTOCOL.md
 * §17; it is asked first: a payment policy is sealed beside a mandate), the
 * referee when it seals a mandate or is a gateway day, the AP2 ruler when it
 * carries `spec.ap2` or `spec.vi` (§16), else the intent ruler.
 *
 * The AP2 ruler verifies SD-JWT credentials with Node-bound libraries: it is
 * not imported here (the page bundles this file) but handed in by the caller
 * that can load it; without it the choice says the ruler is unavailable.
 */
import { AP2_SPEC_KEY, VI_SPEC_KEY } from '../mandates/spec-keys.js';
import { REPLAY_RULERS, replayRuler, specSealsMandate } from '../referee/replay-ruler.js';
import { createRefereeRuler } from '../referee/ruler.js';
import type { TurnRuler } from '../session/types.js';
import type { TranscriptStore } from '../store/types.js';
import { createPaymentsRuler } from './ruler.js';

/** The `--ruler` values of `tally replay`: the referee's choices, payments and ap2. */
export const REPLAY_RULER_CHOICES = [...REPLAY_RULERS, 'payments', 'ap2'] as const;
/** One of {@link REPLAY_RULER_CHOICES}. */
export type ReplayChoice = (typeof REPLAY_RULER_CHOICES)[number];
/** The authority a genesis spec seals, as the choice of ruler reads it. */
export type SealedAuthority = 'payments' | 'ap2' | 'mandate' | undefined;
/** A ruler factory `replay` takes (`ReplayOptions['ruler']`). */
export type ReplayRulerOf = TurnRuler | ((store: TranscriptStore) => TurnRuler) | null;
/** The chosen ruler: `ruler` is absent when it is the AP2 one and the caller could not hand it in. */
export interface ChosenReplayRuler {
  readonly name: 'intent' | 'referee' | 'none' | 'payments' | 'ap2';
  readonly ruler?: ReplayRulerOf;
}

/** Which authority a genesis `spec` seals: a payment policy, a mandate (or a gateway day), an AP2 mandate or VI credential, or none. */
export function sealedAuthorityOf(spec: unknown): SealedAuthority {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return undefined;
  const has = (k: string): boolean => (spec as Record<string, unknown>)[k] !== undefined;
  if (has('payments')) return 'payments';
  if (specSealsMandate(spec)) return 'mandate';
  return has(AP2_SPEC_KEY) || has(VI_SPEC_KEY) ? 'ap2' : undefined;
}

/**
 * The ruler for `choice` (`auto` reads `authority`). `ap2` is the AP2 ruler
 * factory when the caller can load it (the CLI), else absent.
 */
export function chooseReplayRuler(choice: ReplayChoice, authority: SealedAuthority, ap2?: (store: TranscriptStore) => TurnRuler): ChosenReplayRuler {
  if (choice === 'payments' || (choice === 'auto' && authority === 'payments')) {
    // Version-1 mandates are replayed as they were ruled (legacyMandates), as replayRuler does.
    return { name: 'payments', ruler: (store) => createPaymentsRuler({ store, inner: createRefereeRuler({ store, legacyMandates: true }) }) };
  }
  if (choice === 'ap2' || (choice === 'auto' && authority === 'ap2')) return ap2 === undefined ? { name: 'ap2' } : { name: 'ap2', ruler: ap2 };
  return replayRuler(choice, authority === 'mandate');
}
