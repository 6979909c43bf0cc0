/**
 * Witness quorum in the page: the policy (Sigsum format, as `tally verify
 * --policy` reads it) parsed by the one parser, and the checkpoint's
 * cosignatures checked by the one rule (`checkWitnessPolicy`), with WebCrypto
 * Ed25519 answers (crypto.ts). Pinned by quorum only when the rule says so.
 */
import type { DecodedVerifierKey } from '../../receipt/note/verifier-key-text.js';
import { checkWitnessPolicy } from '../../witness/policy/check.js';
import { parseWitnessPolicyWith } from '../../witness/policy/parse-text.js';
import type { QuorumRule } from '../../witness/policy/types.js';
import { Ed25519Oracle } from './crypto.js';
import type { Verdict, Witnessed } from './messages.js';

/** How many cosigners a quorum rule needs at its top (a group's threshold; 1 for one witness; 0 for none). */
export function quorumSize(rule: QuorumRule): number {
  return rule.kind === 'group' ? rule.threshold : rule.kind === 'witness' ? 1 : 0;
}

/** Checks `signedCheckpoint` against the policy text; the witnessed figures, or the failed-pin verdict. */
export async function checkWitnesses(signedCheckpoint: string, keys: readonly DecodedVerifierKey[], policyText: string): Promise<Witnessed | Extract<Verdict, { state: 'failed-pin' }>> {
  const oracle = new Ed25519Oracle();
  const parsed = parseWitnessPolicyWith(policyText, oracle.bind);
  if (!parsed.ok) return { state: 'failed-pin', stage: 'policy', code: parsed.code, message: parsed.message };
  const policy = parsed.policy;
  const log = keys.map((k) => ({ name: k.name, keyId: k.keyId, publicKey: k.publicKey, verify: oracle.bind(k.publicKey) }));
  const w = await oracle.exact(() => checkWitnessPolicy(signedCheckpoint, log, policy));
  const n = policy.witnesses.length;
  const q = quorumSize(policy.quorum);
  if (!w.ok) {
    // The quorum said once: k of n, who cosigned and who did not (the rule's own message repeats "quorum not met").
    const message = w.code === 'below-quorum' ? `witnessed ${w.signed.length} of ${n} (quorum ${q} not met): cosigned by ${w.signed.join(', ') || 'no witness'}${w.missing.length > 0 ? `; not by ${w.missing.join(', ')}` : ''}` : w.message;
    return { state: 'failed-pin', stage: 'witnesses', code: w.code, message };
  }
  return { k: w.signed.length, n, q, signed: w.signed, missing: w.missing };
}
