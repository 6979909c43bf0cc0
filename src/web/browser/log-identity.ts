/**
 * The day's log binding in the page under a pinned log identity
 * (docs/PROTOCOL.md §15.8, §15.9): the identity note (`log.identity`, and
 * its successors, oldest first, as `tally verify --log-identity` takes them)
 * opened by the one rule of src/identity/document-rule.ts, then the binding
 * checked under it by the one rule of src/identity/binding-rule.ts — with
 * WebCrypto's Ed25519 (crypto.ts) and the page's SHA-256, the same checks
 * and `TALLY_LOG_IDENTITY_*` / `TALLY_LOG_*` codes as the CLI. The validity
 * window is read against the browser's clock, as the CLI reads the system's.
 */
import type { BoundCheckpoint } from '../../log/binding-rule.js';
import { openLogIdentityChainWith, type IdentityCrypto } from '../../identity/document-rule.js';
import { verifyLogBindingUnderIdentityWith } from '../../identity/binding-rule.js';
import { decodeVerifierKey } from '../../receipt/note/verifier-key-text.js';
import { parseWitnessPolicyWith } from '../../witness/policy/parse-text.js';
import { Ed25519Oracle, sha256 } from './crypto.js';
import type { LogBindingView, Verdict } from './messages.js';
import { quorumSize } from './witness.js';

type PinFailure = Extract<Verdict, { state: 'failed-pin' }>;

/** The identity rules' cryptography, answered by `oracle` (WebCrypto Ed25519) and the page's SHA-256. */
function pageIdentityCrypto(oracle: Ed25519Oracle): IdentityCrypto {
  return {
    verifierKey: (vkey) => {
      const d = decodeVerifierKey(vkey);
      return d.ok ? { ok: true, verifier: { ...d.key, verify: oracle.bind(d.key.publicKey) } } : d;
    },
    policy: (text) => parseWitnessPolicyWith(text, oracle.bind),
    digest: sha256,
  };
}

/**
 * Checks `logProof` (the binding of `checkpoint`; `seal`: it covers the
 * finalize entry) under the identity chain `identities` (oldest first), at
 * `now` (POSIX seconds; the browser's clock). Answers the binding's view
 * (the shard it is in, its cosigners by the shard's policy) or the failed
 * pin, with the stage and code `tally verify --log-identity --json` gives.
 */
export async function checkUnderIdentityInPage(identities: readonly string[], logProof: string | undefined, checkpoint: BoundCheckpoint, seal: boolean, now = Math.floor(Date.now() / 1000)): Promise<LogBindingView | PinFailure> {
  // As the CLI: a missing binding is refused before the identity is read.
  if (logProof === undefined) return { state: 'failed-pin', stage: 'log', code: 'TALLY_LOG_BINDING_MISSING', message: 'the log identity is pinned and no log binding (log-proof.tlog-proof) was given' };
  const oracle = new Ed25519Oracle();
  const crypto = pageIdentityCrypto(oracle);
  const r = await oracle.exact(() => {
    const id = openLogIdentityChainWith(identities, crypto, { now });
    if (!id.ok) return { ...id, stage: 'identity' as const };
    const b = verifyLogBindingUnderIdentityWith(logProof, { identity: id, checkpoint, seal, digest: sha256 });
    return b.ok ? { ...b, rootKey: id.rootKey.name, current: id.identity.origin } : b;
  });
  if (!r.ok) return { state: 'failed-pin', stage: r.stage === 'witnesses' ? 'log-witnesses' : r.stage, code: r.code, message: r.stage === 'witnesses' ? `the log checkpoint: ${r.message}` : r.message };
  const policy = r.shard.policy;
  const witnessed = { k: r.cosignedBy.length, n: policy.witnesses.length, q: quorumSize(policy.quorum), signed: r.cosignedBy, missing: policy.witnesses.map((w) => w.name).filter((n) => !r.cosignedBy.includes(n)) };
  return {
    checked: true,
    index: r.index,
    origin: r.log.origin,
    size: r.log.size,
    seal: r.leaf.seal,
    identity: { rootKey: r.rootKey, current: r.current, previous: r.shard.final !== undefined },
    ...(policy.witnesses.length === 0 && witnessed.q === 0 ? {} : { witnessed }),
  };
}
