import type { CosignerVerifier } from '../cosignature/key.js';

/** One witness a policy knows. */
export interface PolicyWitness {
  /** The policy's name for it, which is also its cosignature key name. */
  readonly name: string;
  readonly verifier: CosignerVerifier;
  /** Submission prefix (engines submit there); optional for graders. */
  readonly url?: string;
}

/** A quorum rule: a witness, a group (k of its members), or `none`. */
export type QuorumRule =
  | { readonly kind: 'witness'; readonly name: string }
  | { readonly kind: 'group'; readonly name: string; readonly threshold: number; readonly members: readonly QuorumRule[] }
  | { readonly kind: 'none' };

/** A witness policy: who may cosign, and which subsets are enough. */
export interface WitnessPolicy {
  readonly witnesses: readonly PolicyWitness[];
  readonly quorum: QuorumRule;
  /** Raw Ed25519 log keys from `log` lines (empty when the policy names none). */
  readonly logKeys: readonly Uint8Array[];
}
