// engine-log.json `days` (PROTOCOL.md §15.10): the verifier reading the log
// itself (checkDayInLog) and the monitor (monitorEngineLog) on one small log
// in which session A's seal is bound, and mutations of it: leaves appended
// that equivocate, sign past the seal or are not A's own tree, leaves
// changed under the bound root, served checkpoints smaller, unsigned or
// absent. Session A's entries are given, so its tree is real. Each case
// records both readers' answers. Called by scripts/vectors/engine-log.mjs;
// deterministic (RFC 8032 test keys, no clock, no randomness).
import { createHash } from 'node:crypto';
import { sha256 } from '../../dist/codec/index.js';
import { formatCheckpoint, signNote } from '../../dist/receipt/index.js';
import { DAY_IN_LOG_CODES, checkDayInLog, monitorEngineLog } from '../../dist/log/index.js';
import { MerkleLevels, engineLogLeafBytes, entryBundle, entryHash, parseTilePath, rfc6962Hasher, toHex } from '../../dist/protocol/index.js';

const sha = (s) => createHash('sha256').update(s).digest('hex');
const hex = (b) => Buffer.from(b).toString('hex');
const enc = new TextEncoder();

/** A tree of byte strings (RFC 6962, leaves hashed as entries are). */
function treeOf(items) {
  const t = new MerkleLevels(rfc6962Hasher(sha256));
  for (const x of items) t.append(entryHash(sha256, x));
  return t;
}

/** The tlog-tiles source of `leaves` with the served `checkpoint` (null: not served). */
export function memorySource(leaves, checkpoint) {
  return async (path) => {
    if (path === 'checkpoint') return checkpoint === null ? { ok: false, message: 'checkpoint: HTTP 404' } : { ok: true, body: enc.encode(checkpoint) };
    const ref = parseTilePath(path);
    if (ref?.kind !== 'entries' || ref.index * 256 + ref.width > leaves.length) return { ok: false, message: `${path}: HTTP 404` };
    return { ok: true, body: entryBundle(leaves.slice(ref.index * 256, ref.index * 256 + ref.width)) };
  };
}

/** Session entries of `entries` for the monitor: session `id` has them, others none. */
export function memorySessions(id, entries) {
  return async (sessionId, from, to) => ({ ok: true, entries: sessionId === id ? entries.slice(from, to) : [] });
}

/** A monitor result as the corpus records it. */
export function monitorAnswer(r) {
  if (r.ok) return { ok: true };
  if (r.kind === 'equivocation') return { ok: false, kind: r.kind, code: r.code, leaves: r.leaves.map((e) => e.index) };
  if (r.kind === 'session-mismatch') return { ok: false, kind: r.kind, code: r.code, leaves: [r.leaf.index] };
  if (r.kind === 'fork') return { ok: false, kind: r.kind, code: r.code };
  return { ok: false, kind: r.kind };
}

/** A verifier result as the corpus records it. */
export function verifierAnswer(r) {
  return r.ok ? { ok: true, leaves: r.leaves, sameOrigin: r.sameOrigin } : { ok: false, code: r.code, ...(r.leaves ? { leaves: r.leaves, roots: r.roots } : {}) };
}

export async function dayInLogVectors({ logKey, otherKey }) {
  const origin = logKey.name;
  const SA = sha('day session a');
  const dayOrigin = `tally.example/desk/${SA}`;
  const entries = Array.from({ length: 9 }, (_, i) => enc.encode(`{"vector":${i}}`));
  const day = treeOf(entries);
  const rootA = (n) => toHex(day.root(n));
  const cpA = (size, root = rootA(size), seal = false) => ({ kind: 'checkpoint', origin: dayOrigin, size, root, seal });
  const B = `tally.example/desk/${sha('day session b')}`;
  const base = [
    { kind: 'open', session: SA, spec: sha('day spec a') },
    cpA(3),
    cpA(9, rootA(9), true),
    { kind: 'open', session: sha('day session b'), spec: sha('day spec b') },
    { kind: 'checkpoint', origin: B, size: 2, root: sha('day root b 2'), seal: false },
    { kind: 'open', session: sha('day session c'), spec: sha('day spec c') },
  ];
  const bytes = (ls) => ls.map((l) => (l instanceof Uint8Array ? l : engineLogLeafBytes(l)));
  const signedOver = (ls, size = ls.length, key = logKey) => signNote(formatCheckpoint({ origin, size, root: treeOf(bytes(ls)).root(size) }), [key]);
  const bound = { index: 2, leaf: base[2], log: { size: base.length, root: toHex(treeOf(bytes(base)).root(base.length)) } };
  const seed = signedOver(base);
  const other = sha('day another root');
  const grown = (...more) => [...base, ...more];
  const withLeaf1 = [base[0], cpA(3, other), ...base.slice(2)];
  const cases = [
    ['the log as bound', base],
    ['the log grown by another open leaf', grown({ kind: 'open', session: sha('day session d'), spec: sha('day spec d') })],
    ["A's seal logged twice (one size, one root)", grown(base[2])],
    ["A's checkpoint of size 5, its own tree's root", grown(cpA(5))],
    ["another session's two roots at one size (not this day's)", grown({ ...base[4], root: other })],
    ["equivocation: A's size 9 with another root", grown(cpA(9, other))],
    ["equivocation: A's size 9 with another root, as a seal", grown(cpA(9, other, true))],
    ["past the seal: A's size 10", grown(cpA(10, other))],
    ["past the seal: A's size 10, as a seal", grown(cpA(10, other, true))],
    ["not A's tree: size 5 with another root", grown(cpA(5, other))],
    ["not A's tree: leaf 1 (size 3) with another root, in a log bound that way", withLeaf1, { log: { size: 6, root: toHex(treeOf(bytes(withLeaf1)).root(6)) } }],
    ['fork: the served checkpoint is smaller (size 5)', base.slice(0, 5)],
    ["fork: leaf 1 changed, the checkpoint re-signed over it", withLeaf1],
    ['fork: leaf 1 changed, the checkpoint as bound', withLeaf1, { checkpoint: seed }],
    ['too large: at most 5 leaves read', base, { maxLeaves: 5 }],
    ['unsigned: the checkpoint signed by another key under the log name', base, { checkpoint: signedOver(base, base.length, otherKey) }],
    ['unsigned: a leaf that is not an engine-log leaf', grown(enc.encode('tally/v1/engine-log-leaf\u0000{"kind":"other"}'))],
    ['unavailable: no checkpoint served', base, { checkpoint: null }],
  ];
  const out = [];
  for (const [name, ls, over = {}] of cases) {
    const leaves = bytes(ls);
    const checkpoint = over.checkpoint === undefined ? signedOver(ls) : over.checkpoint;
    const binding = over.log === undefined ? bound : { ...bound, log: over.log };
    const c = { name, leaves: leaves.map(hex), checkpoint, binding, ...(over.maxLeaves === undefined ? {} : { maxLeaves: over.maxLeaves }) };
    const rootAt = (n) => (n <= day.size ? rootA(n) : undefined);
    const r = await checkDayInLog({ source: memorySource(leaves, checkpoint), logVerifiers: [logKey.verifierKey], binding, rootAt, ...(over.maxLeaves === undefined ? {} : { maxLeaves: over.maxLeaves }) });
    const seedOf = over.log === undefined ? seed : signedOver(ls, 6);
    const m = await monitorEngineLog({ source: memorySource(leaves, checkpoint), logVerifiers: [logKey.verifierKey], rounds: 1, seed: seedOf, sessions: memorySessions(SA, entries) });
    out.push({ ...c, seed: seedOf, expect: verifierAnswer(r), monitor: monitorAnswer(m) });
  }
  const seen = new Set(out.filter((c) => !c.expect.ok).map((c) => c.expect.code));
  for (const code of DAY_IN_LOG_CODES) if (!seen.has(code)) throw new Error(`no day-in-log vector refused with ${code}`);
  return { logKey: logKey.verifierKey, session: SA, origin: dayOrigin, entries: entries.map((e) => new TextDecoder().decode(e)), cases: out };
}
