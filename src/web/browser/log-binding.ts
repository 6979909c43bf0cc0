/**
 * The day's log binding in the page (docs/PROTOCOL.md §15.5): the tlog-proof
 * `log-proof.tlog-proof` checked against the log verifier key(s) the grader
 * pinned (`log.vkey`) by the one rule `verifyLogBindingWith` of
 * src/log/binding-rule.ts, its Ed25519 answered by WebCrypto (crypto.ts) —
 * the checks and `TALLY_LOG_*` codes of `tally verify --log-key`. A pinned
 * log key makes a missing or bad binding a failed pin; a binding given
 * without one cannot be checked and is said so, never counted. With a
 * witness policy and a log key, the quorum applies to the log checkpoint (as
 * the CLI: what witnesses cosign is the engine log).
 */
import { verifyLogBindingWith, type BoundCheckpoint } from '../../log/binding-rule.js';
import { openPinnedNote } from '../../receipt/note/open-pinned.js';
import { decodeVerifierKey, type DecodedVerifierKey } from '../../receipt/note/verifier-key-text.js';
import { Ed25519Oracle, sha256 } from './crypto.js';
import { checkUnderIdentityInPage } from './log-identity.js';
import type { LogBindingView, Verdict } from './messages.js';
import { checkWitnesses } from './witness.js';

type PinFailure = Extract<Verdict, { state: 'failed-pin' }>;

/** What the page was given of the log: the binding's text, and the pinned log key(s), one a line, or the pinned log identity (its chain, oldest first). */
export interface LogInputs {
  readonly logProof?: string;
  readonly logKey?: string;
  readonly logIdentity?: readonly string[];
}

/** The verifier keys of `text` (one a line, `#` comments), or the failure. */
function logKeys(text: string): DecodedVerifierKey[] | PinFailure {
  const keys: DecodedVerifierKey[] = [];
  for (const line of text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))) {
    const k = decodeVerifierKey(line);
    if (!k.ok) return { state: 'failed-pin', stage: 'log', code: 'TALLY_LOG_UNSIGNED', message: `the log key is not a verifier key (${k.code}): ${k.message}` };
    keys.push(k.key);
  }
  if (keys.length === 0) return { state: 'failed-pin', stage: 'log', code: 'TALLY_LOG_UNSIGNED', message: 'no log verifier key given' };
  return keys;
}

/**
 * Checks the binding of the pinned session `checkpoint` (`seal`: it covers
 * the finalize entry). Answers the binding's view (`checked: false` with the
 * reason when no log key was pinned), or the failed pin. A pinned log
 * identity (log-identity.ts) takes the place of the key and the policy.
 */
export async function checkLogBindingInPage(inputs: LogInputs, checkpoint: BoundCheckpoint, seal: boolean, policyText: string | undefined): Promise<LogBindingView | PinFailure | undefined> {
  if (inputs.logIdentity !== undefined) return checkUnderIdentityInPage(inputs.logIdentity, inputs.logProof, checkpoint, seal);
  if (inputs.logKey === undefined) {
    return inputs.logProof === undefined ? undefined : { checked: false, why: 'a log binding was given without the log key or identity: not checked (load log.vkey or log.identity to require it)' };
  }
  const keys = logKeys(inputs.logKey);
  if (!Array.isArray(keys)) return keys;
  if (inputs.logProof === undefined) return { state: 'failed-pin', stage: 'log', code: 'TALLY_LOG_BINDING_MISSING', message: 'the log key is pinned and no log binding (log-proof.tlog-proof) was given' };
  const oracle = new Ed25519Oracle();
  const verifiers = keys.map((k) => ({ name: k.name, keyId: k.keyId, verify: oracle.bind(k.publicKey) }));
  const text = inputs.logProof;
  const r = await oracle.exact(() => verifyLogBindingWith(text, { open: (note) => openPinnedNote(note, verifiers), digest: sha256, checkpoint, seal }));
  if (!r.ok) return { state: 'failed-pin', stage: r.stage, code: r.code, message: r.message };
  const witnessed = policyText === undefined ? undefined : await checkWitnesses(r.signedCheckpoint, keys, policyText);
  if (witnessed !== undefined && 'state' in witnessed) return { ...witnessed, stage: 'log-witnesses', message: `the log checkpoint: ${witnessed.message}` };
  return { checked: true, index: r.index, origin: r.log.origin, size: r.log.size, seal: r.leaf.seal, ...(witnessed === undefined ? {} : { witnessed }) };
}
