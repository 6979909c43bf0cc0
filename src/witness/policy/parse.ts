/** Witness policies for Node: the pure parsers of ./parse-text.ts with node:crypto Ed25519. */
import { nodeEd25519 } from '../cosignature/key.js';
import { parseWitnessPolicyWith, quorumPolicyWith, type ParsePolicyResult } from './parse-text.js';

export type { ParsePolicyResult } from './parse-text.js';

/**
 * Parses a policy file in the Sigsum policy format (see
 * {@link parseWitnessPolicyWith} for the reading), witness keys checked with
 * node:crypto.
 *
 * @example
 * const r = parseWitnessPolicy('witness w1.example 8f…\nwitness w2.example 1c…\ngroup g 2 w1.example w2.example\nquorum g\n');
 */
export function parseWitnessPolicy(text: string): ParsePolicyResult {
  return parseWitnessPolicyWith(text, nodeEd25519);
}

/**
 * The policy of `--witness <vkey>`… `--quorum k`: these cosigner vkeys, any
 * `k` of them (default: all).
 *
 * @example
 * const r = quorumPolicy([w1Vkey, w2Vkey], 2);
 */
export function quorumPolicy(vkeys: readonly string[], k: number = vkeys.length): ParsePolicyResult {
  return quorumPolicyWith(vkeys, k, nodeEd25519);
}
