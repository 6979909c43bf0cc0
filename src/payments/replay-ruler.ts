/**
 * Which ruler re-derives a day's rulings, from its genesis spec: the one
 * choice `tally replay` and the grader's page both make, so the page replays
 * with exactly the CLI's ruler. `auto` is the x402 payment referee over the
 * referee when the spec seals a payment policy (`spec.payments`, PROTOCOL.md
 * §17; it is asked first: a payment policy is sealed beside a mandate), the
 * referee when it seals a mandate or is a gateway day, the AP2 ruler when it
 * carries `spec.ap2` or `spec.vi` (§16), else the intent ruler.
 *
 * The page bundles this file: every ruler it names is browser-safe (the AP2
 * ruler's SD-JWT checks run on jose's WebCrypto build and @sd-jwt/core with
 * the project's SHA-256, src/mandates/digest.ts), so the page and the CLI
 * replay every day with the same ruler.
 */
import { createAp2Ruler } from '../mandates/ruler.js';
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
/** The chosen ruler and its name (what `tally replay --json` reports as `ruler`). */
export interface ChosenReplayRuler {
  readonly name: 'intent' | 'referee' | 'none' | 'payments' | 'ap2';
  readonly ruler: ReplayRulerOf;
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
 * The ruler for `choice` (`auto` reads `authority`). The AP2 ruler derives a
 * mandate's history from the replay's store (its reservations, written as the
 * bundle's turns are replayed into it) and takes the uses and receipts of
 * other sessions from the recorded rulings, listed as external facts.
 */
export function chooseReplayRuler(choice: ReplayChoice, authority: SealedAuthority): ChosenReplayRuler {
  if (choice === 'payments' || (choice === 'auto' && authority === 'payments')) {
    // Version-1 mandates are replayed as they were ruled (legacyMandates), as replayRuler does.
    return { name: 'payments', ruler: (store) => createPaymentsRuler({ store, inner: createRefereeRuler({ store, legacyMandates: true }) }) };
  }
  if (choice === 'ap2' || (choice === 'auto' && authority === 'ap2')) return { name: 'ap2', ruler: (store: TranscriptStore) => createAp2Ruler({ store }) };
  return replayRuler(choice, authority === 'mandate');
}
