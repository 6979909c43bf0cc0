// engine-log.json (PROTOCOL.md §15): engine-log leaf bytes (accepted leaves
// with their bytes and leaf hash; refused byte strings made by mutating a
// valid leaf, with the reader's code), tlog-tiles paths (accepted with what
// they name; refused spellings), and the tiles of one deterministic log:
// every resource of its checkpoint size with its length and SHA-256, and the
// root. Called by scripts/gen-vectors.mjs; deterministic.
import { createHash } from 'node:crypto';
import { dayInLogVectors } from './day-in-log.mjs';
import { sha256 } from '../../dist/codec/index.js';
import { formatCheckpoint, formatTlogProof, parsePrivateKey, parseTlogProof, signNote } from '../../dist/receipt/index.js';
import { verifyLogBinding } from '../../dist/log/index.js';
import { LOG_IDENTITY_CODES, openLogIdentityChain, readLogIdentity, signLogIdentity, successorPrevious, verifyLogBindingUnderIdentity } from '../../dist/identity/index.js';
import { MerkleLevels, engineLogLeafBytes, entryBundle, entryHash, parseEngineLogLeaf, parseTilePath, rfc6962Hasher, tileHashes, tilePath, tilesForSize, toHex } from '../../dist/protocol/index.js';

const hex = (b) => Buffer.from(b).toString('hex');
const enc = new TextEncoder();
const sha = (s) => createHash('sha256').update(s).digest('hex');
const TAG = 'tally/v1/engine-log-leaf\u0000';
const tagged = (json) => new Uint8Array([...enc.encode(TAG), ...enc.encode(json)]);
const A = sha('session a');
const B = sha('spec a');
const R = sha('root');

export async function engineLogVectors() {
  const leaves = [
    ['open leaf', { kind: 'open', session: A, spec: B }],
    ['checkpoint leaf, not the seal', { kind: 'checkpoint', origin: `tally.example/desk/${A}`, size: 5, root: R, seal: false }],
    ['the seal leaf', { kind: 'checkpoint', origin: `tally.example/desk/${A}`, size: 14, root: R, seal: true }],
    ['checkpoint leaf, size 2^53 - 1', { kind: 'checkpoint', origin: 'o', size: 9007199254740991, root: R, seal: false }],
  ].map(([name, leaf]) => {
    const bytes = engineLogLeafBytes(leaf);
    return { name, leaf, hex: hex(bytes), leafHash: toHex(entryHash(sha256, bytes)) };
  });
  const json = `{"kind":"checkpoint","origin":"o/x","root":"${R}","seal":false,"size":3}`;
  const refuse = [
    ['no tag (bare JSON)', enc.encode(json)],
    ['tag without its NUL', enc.encode('tally/v1/engine-log-leaf' + json)],
    ['another tag', tagged(json).map((b, i) => (i === 9 ? 0x46 : b))],
    ['trailing space', tagged(json + ' ')],
    ['truncated JSON', tagged(json.slice(0, -1))],
    ['members out of order', tagged(`{"kind":"checkpoint","root":"${R}","origin":"o/x","seal":false,"size":3}`)],
    ['an extra member', tagged(json.replace('}', ',"x":1}'))],
    ['a missing member', tagged(`{"kind":"open","session":"${A}"}`)],
    ['size 0', tagged(json.replace('"size":3', '"size":0'))],
    ['upper-case hex root', tagged(json.replace(R, R.toUpperCase()))],
    ['a space in the origin', tagged(json.replace('o/x', 'o x'))],
    ['seal as a number', tagged(json.replace('"seal":false', '"seal":0'))],
    ['unknown kind', tagged(`{"kind":"close","session":"${A}","spec":"${B}"}`)],
    ['duplicate member', tagged(`{"kind":"open","session":"${A}","session":"${A}","spec":"${B}"}`)],
  ].map(([name, bytes]) => {
    const r = parseEngineLogLeaf(bytes);
    if (r.ok) throw new Error(`engine-log vector "${name}" is accepted`);
    return { name, hex: hex(bytes), code: r.code };
  });

  const pathsAccept = ['tile/0/000', 'tile/0/x001/x234/067', 'tile/2/005.p/17', 'tile/63/999.p/255', 'tile/entries/000', 'tile/entries/x001/000.p/1'].map((path) => {
    const ref = parseTilePath(path);
    if (!ref || tilePath(ref) !== path) throw new Error(`tile path vector ${path}`);
    return { path, ref };
  });
  const pathsRefuse = ['tile/00/000', 'tile/64/000', 'tile/0/00', 'tile/0/0000', 'tile/0/001/234', 'tile/0/x001/x234', 'tile/0/x000/001', 'tile/0/000.p/0', 'tile/0/000.p/256', 'tile/0/000.p/07', 'tile/entries/000.p/', 'tile/0/', 'tile/entries', '/tile/0/000', 'tile/0/000/'];
  for (const p of pathsRefuse) if (parseTilePath(p) !== undefined) throw new Error(`tile path ${p} is accepted`);

  // One log: leaf i is the open leaf of session SHA-256("tally engine-log vector <i>") with spec SHA-256("spec <i>").
  const size = 300;
  const logLeaves = Array.from({ length: size }, (_, i) => engineLogLeafBytes({ kind: 'open', session: sha(`tally engine-log vector ${i}`), spec: sha(`spec ${i}`) }));
  const tree = new MerkleLevels(rfc6962Hasher(sha256));
  for (const l of logLeaves) tree.append(entryHash(sha256, l));
  const tiles = tilesForSize(size).map((ref) => {
    const bytes = ref.kind === 'entries' ? entryBundle(logLeaves.slice(ref.index * 256, ref.index * 256 + ref.width)) : tileHashes(tree, ref.level, ref.index, ref.width);
    return { path: tilePath(ref), length: bytes.length, sha256: sha(bytes) };
  });
  const bindings = bindingVectors();
  return {
    bindings,
    identities: identityVectors(bindings),
    days: await dayInLogVectors({ logKey: keyOf(bindings.origin, TEST2), otherKey: keyOf(bindings.origin, TEST1) }),
    description:
      'Engine log (PROTOCOL.md §15): leaves (accept: the leaf, its bytes and RFC 6962 leaf hash; refuse: byte strings and the reader\'s code), C2SP tlog-tiles paths (accept: what the path names; refuse: other spellings), every tile and entry bundle of one log of 300 leaves (leaf i = the open leaf of session sha256("tally engine-log vector <i>"), spec sha256("spec <i>")) with its length and SHA-256, and the root; and log bindings (§15.5): a session checkpoint\'s tlog-proof into a signed log checkpoint, verified with bindings.logKey (RFC 8032 TEST 2 seed, named as the log origin), accepted or refused with the TALLY_LOG_* code, the refusals made by mutating the accepted one; and log identities (§15.8, §15.9): identity notes (a chain, the pinned one first) checked at a time, optionally with a binding checked under the last, accepted (the shards it names) or refused with the TALLY_LOG_IDENTITY_* code; root key RFC 8032 TEST 1 seed named tally.example/desk/root, shard 1 the bindings\' log (TEST 2), shard 2 tally.example/desk/log/2 (TEST 3); and days in the log (§15.10): a log (its leaves and served checkpoint, null when none is served) in which the seal of session days.session is bound (binding: its index, leaf and log checkpoint), read by the verifier (checkDayInLog with the session\'s tree of days.entries, at most maxLeaves leaves) and by the monitor (one round seeded with seed, the session\'s entries given), accepted (leaves read, the origin\'s other checkpoint leaves) or refused with the code, the leaves named and their roots; each refusal mutates the log as bound.',
    leaves: { accept: leaves, refuse },
    paths: { accept: pathsAccept, refuse: pathsRefuse },
    log: { size, root: toHex(tree.root(size)), tiles },
  };
}

/** RFC 8032 §7.1 TEST 2 and TEST 1 seeds (public test keys) as PKCS#8 PEM. */
const TEST2 = '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb';
const TEST1 = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const keyOf = (name, seedHex) => parsePrivateKey(`-----BEGIN PRIVATE KEY-----\n${Buffer.from('302e020100300506032b657004220420' + seedHex, 'hex').toString('base64')}\n-----END PRIVATE KEY-----\n`, name);

/**
 * Log bindings (§15.5). One log `tally.example/desk/log` of 6 leaves: session
 * A opened, its checkpoints of sizes 3 and 9 (the seal), session B opened,
 * its checkpoint of size 2, a third open leaf. The binding of A's seal is
 * leaf 2 in the checkpoint of all 6; every refusal mutates it.
 */
function bindingVectors() {
  const origin = 'tally.example/desk/log';
  const logKey = keyOf(origin, TEST2);
  const SA = sha('binding session a');
  const SB = sha('binding session b');
  const seal = { origin: `tally.example/desk/${SA}`, size: 9, root: sha('root a 9') };
  const leaves = [
    { kind: 'open', session: SA, spec: sha('spec a') },
    { kind: 'checkpoint', origin: seal.origin, size: 3, root: sha('root a 3'), seal: false },
    { kind: 'checkpoint', ...seal, seal: true },
    { kind: 'open', session: SB, spec: sha('spec b') },
    { kind: 'checkpoint', origin: `tally.example/desk/${SB}`, size: 2, root: sha('root b 2'), seal: false },
    { kind: 'open', session: sha('binding session c'), spec: sha('spec c') },
  ].map(engineLogLeafBytes);
  const tree = new MerkleLevels(rfc6962Hasher(sha256));
  for (const l of leaves) tree.append(entryHash(sha256, l));
  const n = leaves.length;
  const signed = (key, cpOrigin = origin, size = n) => signNote(formatCheckpoint({ origin: cpOrigin, size, root: tree.root(size) }), [key]);
  const proofOf = (index, size, over = {}) => formatTlogProof({ index, proof: tree.inclusionProof(index, size), signedCheckpoint: signed(logKey, origin, size), extraData: leaves[index], ...over });
  const good = proofOf(2, n);
  const p = parseTlogProof(good);
  if (!p.ok) throw new Error('binding vector');
  const tp = p.tlogProof;
  const flip = (h) => h.map((b, i) => (i === 0 ? b ^ 1 : b));
  const want = { checkpoint: seal, seal: true };
  const cases = [
    ['the seal of session A, leaf 2 of 6', good, want],
    ['the seal in a smaller log checkpoint (size 3)', proofOf(2, 3), want],
    ['an earlier checkpoint of A (size 3), seal not asked', proofOf(1, n), { checkpoint: { ...seal, size: 3, root: sha('root a 3') } }],
    ['garbage prepended', `x${good}`, want],
    ['no extra line', formatTlogProof({ index: 2, proof: tp.proof, signedCheckpoint: tp.signedCheckpoint }), want],
    ['signed by another key under the log name', formatTlogProof({ ...tp, signedCheckpoint: signed(keyOf(origin, TEST1)) }), want],
    ['signed by the log key under a name that is not the origin', formatTlogProof({ ...tp, signedCheckpoint: signed(keyOf('tally.example/desk', TEST2)) }), { ...want, logKeyName: 'tally.example/desk' }],
    ['extra is the open leaf of A', formatTlogProof({ ...tp, extraData: leaves[0] }), want],
    ['extra is not a leaf (one byte changed)', formatTlogProof({ ...tp, extraData: leaves[2].map((b, i) => (i === 30 ? b ^ 0x20 : b)) }), want],
    ['another checkpoint of the same day (leaf 1, size 3)', proofOf(1, n), want],
    ["another day's checkpoint (leaf 4)", proofOf(4, n), want],
    ['the seal leaf, where a non-seal checkpoint is expected', good, { ...want, seal: false }],
    ['index + 1', formatTlogProof({ ...tp, index: 3 }), want],
    ['index - 1', formatTlogProof({ ...tp, index: 1 }), want],
    ['one bit flipped in the first proof hash', formatTlogProof({ ...tp, proof: [flip(tp.proof[0]), ...tp.proof.slice(1)] }), want],
    ['one bit flipped in the last proof hash', formatTlogProof({ ...tp, proof: [...tp.proof.slice(0, -1), flip(tp.proof.at(-1))] }), want],
    ['a proof hash removed', formatTlogProof({ ...tp, proof: tp.proof.slice(1) }), want],
    ['a proof hash inserted', formatTlogProof({ ...tp, proof: [tp.proof[0], ...tp.proof] }), want],
    ['the log checkpoint of size 6 claims size 12', formatTlogProof({ ...tp, signedCheckpoint: signNote(formatCheckpoint({ origin, size: 12, root: tree.root(n) }), [logKey]) }), want],
  ].map(([name, text, w]) => {
    const pinned = w.logKeyName === undefined ? logKey.verifierKey : keyOf(w.logKeyName, TEST2).verifierKey;
    const r = verifyLogBinding(text, { logVerifiers: [pinned], checkpoint: w.checkpoint, ...(w.seal === undefined ? {} : { seal: w.seal }) });
    const expect = r.ok ? { ok: true, index: r.index, logSize: r.log.size } : { ok: false, code: r.code };
    return { name, text, checkpoint: w.checkpoint, ...(w.seal === undefined ? {} : { seal: w.seal }), ...(w.logKeyName === undefined ? {} : { logKey: pinned }), expect };
  });
  const codes = new Set(cases.filter((c) => !c.expect.ok).map((c) => c.expect.code));
  for (const c of ['TALLY_LOG_PROOF_INVALID', 'TALLY_LOG_LEAF_MISSING', 'TALLY_LOG_UNSIGNED', 'TALLY_LOG_WRONG_ORIGIN', 'TALLY_LOG_LEAF_INVALID', 'TALLY_LOG_LEAF_MISMATCH', 'TALLY_LOG_NOT_INCLUDED']) if (!codes.has(c)) throw new Error(`no binding vector refused with ${c}`);
  return { logKey: logKey.verifierKey, origin, leaves: leaves.map(hex), root: toHex(tree.root(n)), cases };
}

/** RFC 8032 §7.1 TEST 3 seed (a public test key). */
const TEST3 = 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7';

/**
 * Log identities (§15.8) and rotation (§15.9). Shard 1 is the bindings' log
 * (`tally.example/desk/log`, TEST 2), shard 2 `tally.example/desk/log/2`
 * (TEST 3), the root key `tally.example/desk/root` (TEST 1). Shard 2's
 * identity succeeds shard 1 at its final checkpoint (the bindings' size 6).
 * Each case: the identity notes (a chain, pinned first), the time, and —
 * optionally — a binding checked under the last; every refusal mutates an
 * accepted one.
 */
export function identityVectors(bindings) {
  const root = keyOf('tally.example/desk/root', TEST1);
  const log1 = keyOf('tally.example/desk/log', TEST2);
  const log2 = keyOf('tally.example/desk/log/2', TEST3);
  const NB = 1767225600; // 2026-01-01T00:00:00Z
  const NOW = NB + 86400;
  const policy = 'quorum none\n';
  const base = { tiles: [], witness_policy: policy, rate: { requests: 12, window_seconds: 60 }, not_before: NB, previous: [] };
  const id1 = signLogIdentity({ ...base, origin: log1.name, tiles: ['https://tally.example/desk/log'] }, { root, log: log1 });
  const opened1 = readLogIdentity(id1);
  if (!opened1.ok) throw new Error('identity vector');
  const next = (final, over = {}, keys = { root, log: log2 }) => signLogIdentity({ ...base, origin: keys.log.name, tiles: ['https://tally.example/desk/log/2'], previous: successorPrevious(opened1, final), ...over }, keys);
  const final = { size: 6, root: bindings.root };
  const id2 = next(final);
  const text1 = id1.slice(0, id1.indexOf('\n\n') + 1);
  const sigs1 = id1.slice(id1.indexOf('\n\n') + 2).split('\n').filter(Boolean);
  const flipSig = (line) => {
    const [dash, name, b64] = line.split(' ');
    const b = Buffer.from(b64, 'base64');
    b[b.length - 1] ^= 1;
    return [dash, name, b.toString('base64')].join(' ');
  };
  const note = (text, sigs) => `${text}\n${sigs.map((s) => `${s}\n`).join('')}`;
  const resign = (text) => signNote(text, [root, log1]);
  const good = bindings.cases[0];
  const binding = { text: good.text, checkpoint: good.checkpoint, seal: true };
  const cases = [
    ['shard 1', [id1], NOW],
    ['shard 1, at not_before', [id1], NB],
    ['shard 2, succeeding shard 1 at size 6', [id2], NOW],
    ['the chain shard 1 then shard 2', [id1, id2], NOW],
    ["shard 1's binding of the seal, under shard 1", [id1], NOW, binding],
    ["shard 1's binding of the seal, under shard 2 (an old day after the rotation)", [id2], NOW, binding],
    ["shard 1's binding, under the chain", [id1, id2], NOW, binding],
    ['garbage prepended', [`x${id1}`], NOW],
    ['the tag line changed', [resign(text1.replace('tally/v1/log-identity', 'tally/v1/log-identities'))], NOW],
    ['JSON not canonical (a space after a colon)', [resign(text1.replace('"requests":12', '"requests": 12'))], NOW],
    ['an extra member', [resign(text1.replace('{"log_key"', '{"extra":1,"log_key"'))], NOW],
    ['a member missing (rate)', [resign(text1.replace(',"rate":{"requests":12,"window_seconds":60}', ''))], NOW],
    ['the witness policy does not parse', [resign(text1.replace('"witness_policy":"quorum none\\n"', '"witness_policy":"quorum\\n"'))], NOW],
    ['the log key named other than the origin', [signLogIdentity({ ...base, origin: 'tally.example/desk/other' }, { root, log: keyOf('tally.example/desk/other', TEST2) }).replace('"origin":"tally.example/desk/other"', '"origin":"tally.example/desk/log"')], NOW],
    ['the log key is the root key', [signNote(text1.replace(log1.verifierKey, root.verifierKey).replace('"origin":"tally.example/desk/log"', '"origin":"tally.example/desk/root"'), [root])], NOW],
    ["the root's signature removed", [note(text1, sigs1.slice(1))], NOW],
    ["the log key's signature removed", [note(text1, sigs1.slice(0, 1))], NOW],
    ["one bit flipped in the root's signature", [note(text1, [flipSig(sigs1[0]), sigs1[1]])], NOW],
    ['a member changed after signing (rate 13)', [note(text1.replace('"requests":12', '"requests":13'), sigs1)], NOW],
    ["signed by another key under the root's name", [signNote(text1.replace(root.verifierKey, keyOf(root.name, TEST3).verifierKey), [root, log1])], NOW],
    ['before not_before', [id1], NB - 1],
    ['at not_after', [signLogIdentity({ ...base, origin: log1.name, not_after: NB + 3600 }, { root, log: log1 })], NB + 3600],
    ['a successor under another root', [id1, next(final, {}, { root: keyOf('tally.example/other/root', TEST3), log: log2 })], NOW],
    ['a successor that names another identity', [id1, next(final).replace(opened1.id, '00'.repeat(32))], NOW],
    ['a successor that names another identity, re-signed', [id1, signLogIdentity({ ...base, origin: log2.name, previous: [{ ...successorPrevious(opened1, final)[0], identity: '00'.repeat(32) }] }, { root, log: log2 })], NOW],
    ["shard 1's binding under an identity naming only shard 2", [signLogIdentity({ ...base, origin: log2.name }, { root, log: log2 })], NOW, binding],
    ["shard 1's binding (size 6) beyond shard 1's final checkpoint (size 3)", [next({ size: 3, root: bindings.root })], NOW, binding],
    ["shard 1's binding at its final size with another final root", [next({ size: 6, root: '00'.repeat(32) })], NOW, binding],
  ].map(([name, notes, now, b]) => {
    const id = openLogIdentityChain(notes, { now });
    let expect;
    if (!id.ok) expect = { ok: false, code: id.code };
    else if (b === undefined) expect = { ok: true, origin: id.identity.origin, shards: id.shards.map((s) => s.origin) };
    else {
      const r = verifyLogBindingUnderIdentity(b.text, { identity: id, checkpoint: b.checkpoint, seal: b.seal });
      expect = r.ok ? { ok: true, origin: id.identity.origin, shards: id.shards.map((s) => s.origin), logOrigin: r.log.origin, index: r.index } : { ok: false, code: r.code };
    }
    return { name, notes, now, ...(b === undefined ? {} : { binding: b }), expect };
  });
  const codes = new Set(cases.filter((c) => !c.expect.ok).map((c) => c.expect.code));
  for (const c of LOG_IDENTITY_CODES) if (!codes.has(c)) throw new Error(`no identity vector refused with ${c}`);
  return { rootKey: root.verifierKey, logKeys: [log1.verifierKey, log2.verifierKey], cases };
}
