/**
 * The one identity rule (src/identity/document-rule.ts) and the one
 * under-identity binding rule (binding-rule.ts) with their cryptography
 * passed in. Node's wrappers (`openLogIdentity`, `openLogIdentityChain`,
 * `verifyLogBindingUnderIdentity`) are the rules with node's crypto; the
 * page builds its crypto from `decodeVerifierKey` and `parseWitnessPolicyWith`
 * with a bound Ed25519 (WebCrypto there; node's here, so the two can be
 * compared on the same bytes): on every mutated note and binding the two
 * answer the same. Known answers pin each code of §15.8 in order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/codec/sha256.js';
import { createEngine } from '../../src/engine.js';
import {
  NODE_IDENTITY_CRYPTO,
  openLogIdentity,
  openLogIdentityChain,
  openLogIdentityChainWith,
  openLogIdentityWith,
  signLogIdentity,
  successorPrevious,
  verifyLogBindingUnderIdentity,
  verifyLogBindingUnderIdentityWith,
  type IdentityCrypto,
  type OpenedLogIdentity,
} from '../../src/identity/index.js';
import { EngineLog, logBinding } from '../../src/log/index.js';
import { createNotary, generateEngineKey } from '../../src/receipt/index.js';
import { signNote } from '../../src/receipt/note/sign.js';
import { decodeVerifierKey } from '../../src/receipt/note/verifier-key-text.js';
import { MemoryStore } from '../../src/store/index.js';
import { nodeEd25519 } from '../../src/witness/cosignature/key.js';
import { parseWitnessPolicyWith } from '../../src/witness/policy/parse-text.js';
import { drive } from '../log/day.js';

const SEED = 0x1d3e7;
const NOW = 1_800_000_000;

/** The page's construction of the identity crypto (log-identity.ts), with node's Ed25519 in WebCrypto's place. */
const pageLike: IdentityCrypto = {
  verifierKey: (v) => {
    const d = decodeVerifierKey(v);
    if (!d.ok) return d;
    const check = nodeEd25519(d.key.publicKey);
    return { ok: true, verifier: { ...d.key, verify: (m, s) => check !== undefined && check(m, s) } };
  },
  policy: (t) => parseWitnessPolicyWith(t, nodeEd25519),
  digest: sha256,
};

/** What a result says, without its functions. */
const said = (r: { ok: boolean; code?: string; message?: string; id?: string; stage?: string; index?: number }) => ({ ok: r.ok, code: r.code, message: r.message, id: r.id, stage: r.stage, index: r.index });

describe(`the identity rule with the crypto passed in (seed ${SEED.toString(16)})`, async () => {
  const engineKey = generateEngineKey('tally.example/desk');
  const logKey = generateEngineKey('tally.example/desk/log/a');
  const root = generateEngineKey('tally.example/desk/root');
  const store = new MemoryStore();
  const engine = createEngine({ store });
  const sid = await drive(engine, 'identity-rule', 2);
  const sealed = await createNotary({ key: engineKey }).sealWithReceipt(engine, sid);
  if (!sealed.ok) throw new Error(sealed.message);
  const checkpoint = { origin: sealed.checkpoint.origin, size: sealed.checkpoint.size, root: sealed.checkpoint.root };
  const binding = await logBinding(new EngineLog({ store, key: logKey, minIntervalMs: 0 }), checkpoint);
  const input = { origin: logKey.name, tiles: ['https://tally.example/desk/log/a/'], witness_policy: 'quorum none\n', rate: { requests: 12, window_seconds: 60 }, not_before: 1_700_000_000, not_after: 1_900_000_000, previous: [] };
  const note = signLogIdentity(input, { root, log: logKey });

  it('known answers: valid; another root’s signature; an edited text; outside the window; another log; a chain under another root', () => {
    const id = openLogIdentityWith(note, NODE_IDENTITY_CRYPTO, { now: NOW });
    expect(id).toMatchObject({ ok: true, shards: [{ origin: logKey.name }] });
    expect(said(openLogIdentity(note, { now: NOW }))).toEqual(said(id));
    const text = note.slice(0, note.indexOf('\n\n') + 1);
    expect(openLogIdentityWith(signNote(text, [generateEngineKey(root.name), logKey]), pageLike, { now: NOW })).toMatchObject({ ok: false, code: 'TALLY_LOG_IDENTITY_UNSIGNED' });
    expect(openLogIdentityWith(note.replace('"rate":{"requests":12', '"rate":{"requests":13'), pageLike, { now: NOW })).toMatchObject({ ok: false, code: 'TALLY_LOG_IDENTITY_UNSIGNED' });
    expect(openLogIdentityWith(note, pageLike, { now: input.not_before - 1 })).toMatchObject({ ok: false, code: 'TALLY_LOG_IDENTITY_EXPIRED' });
    expect(openLogIdentityWith(note, pageLike, { now: input.not_after })).toMatchObject({ ok: false, code: 'TALLY_LOG_IDENTITY_EXPIRED' });
    const other = openLogIdentityWith(signLogIdentity({ ...input, origin: 'tally.example/desk/log/b' }, { root, log: generateEngineKey('tally.example/desk/log/b') }), pageLike, { now: NOW }) as OpenedLogIdentity;
    expect(verifyLogBindingUnderIdentityWith(binding, { identity: other, checkpoint, seal: true, digest: sha256 })).toMatchObject({ ok: false, stage: 'identity', code: 'TALLY_LOG_IDENTITY_WRONG_LOG' });
    const opened = id as OpenedLogIdentity;
    const successor = signLogIdentity({ ...input, origin: 'tally.example/desk/log/b', previous: successorPrevious(opened, { size: 1, root: 'ab'.repeat(32) }) }, { root: generateEngineKey(root.name), log: generateEngineKey('tally.example/desk/log/b') });
    expect(openLogIdentityChainWith([note, successor], pageLike, { now: NOW })).toMatchObject({ ok: false, code: 'TALLY_LOG_IDENTITY_CHAIN' });
    expect(said(openLogIdentityChain([note, successor], { now: NOW }))).toEqual(said(openLogIdentityChainWith([note, successor], pageLike, { now: NOW })));
    const bound = verifyLogBindingUnderIdentityWith(binding, { identity: opened, checkpoint, seal: true, digest: sha256 });
    expect(bound).toMatchObject({ ok: true, shard: { origin: logKey.name }, log: { origin: logKey.name }, cosignedBy: [] });
    expect(verifyLogBindingUnderIdentityWith(binding, { identity: opened, checkpoint, seal: false, digest: sha256 })).toMatchObject({ ok: false, stage: 'log', code: 'TALLY_LOG_LEAF_MISMATCH' });
  });

  it('on every mutated identity note, node’s wrapper and the page’s construction of the rule answer the same', () => {
    const edit = fc.record({ at: fc.nat(note.length - 1), c: fc.constantFrom('a', 'Z', '0', '+', '/', '=', '\n', ' ', '"', '') });
    fc.assert(
      fc.property(edit, fc.integer({ min: input.not_before - 2, max: input.not_after + 1 }), ({ at, c }, now) => {
        const m = note.slice(0, at) + c + note.slice(at + 1);
        const node = openLogIdentity(m, { now });
        expect(said(openLogIdentityWith(m, pageLike, { now }))).toEqual(said(node));
        if (m === note && now >= input.not_before && now < input.not_after) expect(node.ok).toBe(true);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('on every mutated binding, node’s under-identity check and the rule under the page’s crypto answer the same', () => {
    const nodeId = openLogIdentity(note, { now: NOW }) as OpenedLogIdentity;
    const pageId = openLogIdentityWith(note, pageLike, { now: NOW }) as OpenedLogIdentity;
    const edit = fc.record({ at: fc.nat(binding.length - 1), c: fc.constantFrom('a', 'B', '1', '+', '\n', ' ', '') });
    let refused = 0;
    fc.assert(
      fc.property(edit, ({ at, c }) => {
        const m = binding.slice(0, at) + c + binding.slice(at + 1);
        const node = verifyLogBindingUnderIdentity(m, { identity: nodeId, checkpoint, seal: true });
        expect(said(verifyLogBindingUnderIdentityWith(m, { identity: pageId, checkpoint, seal: true, digest: sha256 }))).toEqual(said(node));
        if (!node.ok) refused++;
        if (m === binding) expect(node.ok).toBe(true);
      }),
      { seed: SEED, numRuns: 300 },
    );
    // The mutations bite: most edits of a binding are refused.
    expect(refused).toBeGreaterThan(150);
  });
});
