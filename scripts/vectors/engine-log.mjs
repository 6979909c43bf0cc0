// engine-log.json (PROTOCOL.md §15): engine-log leaf bytes (accepted leaves
// with their bytes and leaf hash; refused byte strings made by mutating a
// valid leaf, with the reader's code), tlog-tiles paths (accepted with what
// they name; refused spellings), and the tiles of one deterministic log:
// every resource of its checkpoint size with its length and SHA-256, and the
// root. Called by scripts/gen-vectors.mjs; deterministic.
import { createHash } from 'node:crypto';
import { sha256 } from '../../dist/codec/index.js';
import { MerkleLevels, engineLogLeafBytes, entryBundle, entryHash, parseEngineLogLeaf, parseTilePath, rfc6962Hasher, tileHashes, tilePath, tilesForSize, toHex } from '../../dist/protocol/index.js';

const hex = (b) => Buffer.from(b).toString('hex');
const enc = new TextEncoder();
const sha = (s) => createHash('sha256').update(s).digest('hex');
const TAG = 'tally/v1/engine-log-leaf\u0000';
const tagged = (json) => new Uint8Array([...enc.encode(TAG), ...enc.encode(json)]);
const A = sha('session a');
const B = sha('spec a');
const R = sha('root');

export function engineLogVectors() {
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
  return {
    description:
      'Engine log (PROTOCOL.md §15): leaves (accept: the leaf, its bytes and RFC 6962 leaf hash; refuse: byte strings and the reader\'s code), C2SP tlog-tiles paths (accept: what the path names; refuse: other spellings), and every tile and entry bundle of one log of 300 leaves (leaf i = the open leaf of session sha256("tally engine-log vector <i>"), spec sha256("spec <i>")) with its length and SHA-256, and the root.',
    leaves: { accept: leaves, refuse },
    paths: { accept: pathsAccept, refuse: pathsRefuse },
    log: { size, root: toHex(tree.root(size)), tiles },
  };
}
