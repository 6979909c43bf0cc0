/**
 * engine-log.json (PROTOCOL.md §15): the library writes and reads every leaf
 * as the corpus says; leaf hashes, tile hashes, entry bundles and the root
 * are recomputed here a second way — node:crypto and a naive MTH written
 * from RFC 6962 §2.1, no library tree code — from the leaf rule the corpus
 * states.
 */
import { createHash, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { engineLogLeafBytes, entryBundle, parseEngineLogLeaf, parseTilePath, tilePath, type CheckpointLeaf, type EngineLogLeaf, type TileRef } from '../../src/protocol/index.js';
import { DAY_IN_LOG_CODES, LOG_BINDING_CODES, checkDayInLog, monitorEngineLog, verifyLogBinding, type CheckDayInLogResult, type LogMonitorResult, type LogSource } from '../../src/log/index.js';
import { LOG_IDENTITY_CODES, openLogIdentityChain, verifyLogBindingUnderIdentity } from '../../src/identity/index.js';
import { loadVectors } from './corpus.js';

interface V {
  leaves: { accept: { name: string; leaf: EngineLogLeaf; hex: string; leafHash: string }[]; refuse: { name: string; hex: string; code: string }[] };
  paths: { accept: { path: string; ref: TileRef }[]; refuse: string[] };
  log: { size: number; root: string; tiles: { path: string; length: number; sha256: string }[] };
}
const v = loadVectors<V>('engine-log.json');
const h = (...parts: Uint8Array[]) => new Uint8Array(createHash('sha256').update(Buffer.concat(parts)).digest());
const sha = (s: string | Uint8Array) => createHash('sha256').update(s).digest('hex');
const hexOf = (b: Uint8Array) => Buffer.from(b).toString('hex');
/** RFC 6962 §2.1 MTH, naively. */
function mth(leafHashes: Uint8Array[]): Uint8Array {
  if (leafHashes.length === 1) return leafHashes[0]!;
  let k = 1;
  while (k * 2 < leafHashes.length) k *= 2;
  return h(new Uint8Array([1]), mth(leafHashes.slice(0, k)), mth(leafHashes.slice(k)));
}

describe('engine-log.json', () => {
  it.each(v.leaves.accept.map((c) => [c.name, c] as const))('leaf %s: the bytes, the leaf hash, and read back', (_n, c) => {
    expect(hexOf(engineLogLeafBytes(c.leaf))).toBe(c.hex);
    const bytes = Buffer.from(c.hex, 'hex');
    expect(hexOf(h(new Uint8Array([0]), bytes))).toBe(c.leafHash);
    expect(parseEngineLogLeaf(new Uint8Array(bytes))).toEqual({ ok: true, leaf: c.leaf });
  });

  it.each(v.leaves.refuse.map((c) => [c.name, c] as const))('refuses %s', (_n, c) => {
    expect(parseEngineLogLeaf(new Uint8Array(Buffer.from(c.hex, 'hex')))).toMatchObject({ ok: false, code: c.code });
  });

  it('tile paths: each accepted one names its ref and is its own spelling; every refused one is refused', () => {
    for (const c of v.paths.accept) {
      expect(parseTilePath(c.path)).toEqual(c.ref);
      expect(tilePath(c.ref)).toBe(c.path);
    }
    for (const p of v.paths.refuse) expect(parseTilePath(p), p).toBeUndefined();
  });

  it('the tiles of the corpus log, recomputed naively from its leaf rule', () => {
    const leaves = Array.from({ length: v.log.size }, (_, i) =>
      Buffer.concat([Buffer.from('tally/v1/engine-log-leaf\0'), Buffer.from(`{"kind":"open","session":"${sha(`tally engine-log vector ${i}`)}","spec":"${sha(`spec ${i}`)}"}`)]),
    );
    const lh = leaves.map((l) => h(new Uint8Array([0]), l));
    expect(hexOf(mth(lh))).toBe(v.log.root);
    for (const t of v.log.tiles) {
      const ref = parseTilePath(t.path)!;
      let bytes: Uint8Array;
      if (ref.kind === 'entries') {
        bytes = Buffer.concat(leaves.slice(ref.index * 256, ref.index * 256 + ref.width).map((l) => Buffer.concat([Buffer.from([l.length >> 8, l.length & 255]), l])));
      } else {
        const per = 256 ** ref.level;
        bytes = Buffer.concat(Array.from({ length: ref.width }, (_, i) => mth(lh.slice((ref.index * 256 + i) * per, (ref.index * 256 + i + 1) * per))));
      }
      expect(bytes.length, t.path).toBe(t.length);
      expect(sha(bytes), t.path).toBe(t.sha256);
    }
    expect(v.log.tiles.map((t) => t.path)).toEqual(['tile/0/000', 'tile/0/001.p/44', 'tile/entries/000', 'tile/entries/001.p/44', 'tile/1/000.p/1']);
  });
});

interface BindingCase {
  name: string;
  text: string;
  checkpoint: { origin: string; size: number; root: string };
  seal?: boolean;
  logKey?: string;
  expect: { ok: true; index: number; logSize: number } | { ok: false; code: string };
}
const b = loadVectors<{ bindings: { logKey: string; origin: string; leaves: string[]; root: string; cases: BindingCase[] } }>('engine-log.json').bindings;

/** The inclusion path folded as RFC 9162 §2.1.3.2 states it, naively. */
function foldInclusion(index: number, size: number, leafHash: Uint8Array, path: Uint8Array[]): Uint8Array | undefined {
  if (index >= size) return undefined;
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of path) {
    if (sn === 0) return undefined;
    if (fn % 2 === 1 || fn === sn) {
      r = h(new Uint8Array([1]), p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else r = h(new Uint8Array([1]), r, p);
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 ? r : undefined;
}

/** The checkpoint note checked with node:crypto alone: the text, then `— <name> base64(keyid ‖ Ed25519 signature)` by `vkey`. */
function noteSignedBy(note: string, vkey: string): { origin: string; size: number; root: Uint8Array } | undefined {
  const [name, keyIdHex, b64] = vkey.split('+') as [string, string, string];
  const pub = Buffer.from(b64, 'base64').subarray(1);
  const cut = note.indexOf('\n\n');
  const text = note.slice(0, cut + 1);
  const line = note.slice(cut + 2).split('\n').find((l) => l.startsWith(`\u2014 ${name} `));
  if (line === undefined) return undefined;
  const sig = Buffer.from(line.slice(`\u2014 ${name} `.length), 'base64');
  if (sig.subarray(0, 4).toString('hex') !== keyIdHex) return undefined;
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pub.toString('base64url') }, format: 'jwk' });
  if (!cryptoVerify(null, Buffer.from(text), key, sig.subarray(4))) return undefined;
  const [origin, size, root] = text.split('\n') as [string, string, string];
  return { origin, size: Number(size), root: new Uint8Array(Buffer.from(root, 'base64')) };
}

describe('engine-log.json bindings (§15.5)', () => {
  it('the corpus log: its leaves rebuild its root naively', () => {
    expect(hexOf(mth(b.leaves.map((l) => h(new Uint8Array([0]), Buffer.from(l, 'hex')))))).toBe(b.root);
  });

  it.each(b.cases.map((c) => [c.name, c] as const))('%s', (_n, c) => {
    const r = verifyLogBinding(c.text, { logVerifiers: [c.logKey ?? b.logKey], checkpoint: c.checkpoint, ...(c.seal === undefined ? {} : { seal: c.seal }) });
    expect(r.ok ? { ok: true, index: r.index, logSize: r.log.size } : { ok: false, code: r.code }).toEqual(c.expect);
    if (!c.expect.ok) return;
    // Accepted: a second way, with node:crypto and the RFC's own algorithm (no library code).
    const lines = c.text.split('\n');
    const extra = Buffer.from(lines[1]!.slice('extra '.length), 'base64');
    const index = Number(lines[2]!.slice('index '.length));
    const blank = lines.indexOf('', 3);
    const path = lines.slice(3, blank).map((l) => new Uint8Array(Buffer.from(l, 'base64')));
    const cp = noteSignedBy(lines.slice(blank + 1).join('\n'), b.logKey);
    expect(cp?.origin).toBe(b.origin);
    const leafJson = JSON.parse(extra.subarray('tally/v1/engine-log-leaf\0'.length).toString()) as Record<string, unknown>;
    expect(leafJson).toEqual({ kind: 'checkpoint', ...c.checkpoint, seal: leafJson['seal'] });
    expect(hexOf(foldInclusion(index, cp!.size, h(new Uint8Array([0]), extra), path)!)).toBe(hexOf(cp!.root));
  });

  it('every refusal code is exercised', () => {
    const seen = new Set(b.cases.flatMap((c) => (c.expect.ok ? [] : [c.expect.code])));
    expect([...seen].sort()).toEqual(LOG_BINDING_CODES.filter((c) => c !== 'TALLY_LOG_BINDING_MISSING').sort());
  });
});

interface IdentityCase {
  name: string;
  notes: string[];
  now: number;
  binding?: { text: string; checkpoint: { origin: string; size: number; root: string }; seal: boolean };
  expect: { ok: true; origin: string; shards: string[]; logOrigin?: string; index?: number } | { ok: false; code: string };
}
const ids = loadVectors<{ identities: { rootKey: string; logKeys: string[]; cases: IdentityCase[] } }>('engine-log.json').identities;

describe('engine-log.json identities (§15.8, §15.9)', () => {
  it.each(ids.cases.map((c) => [c.name, c] as const))('%s', (_n, c) => {
    const id = openLogIdentityChain(c.notes, { now: c.now });
    let got: IdentityCase['expect'];
    if (!id.ok) got = { ok: false, code: id.code };
    else if (c.binding === undefined) got = { ok: true, origin: id.identity.origin, shards: id.shards.map((s) => s.origin) };
    else {
      const r = verifyLogBindingUnderIdentity(c.binding.text, { identity: id, checkpoint: c.binding.checkpoint, seal: c.binding.seal });
      got = r.ok ? { ok: true, origin: id.identity.origin, shards: id.shards.map((s) => s.origin), logOrigin: r.log.origin, index: r.index } : { ok: false, code: r.code };
    }
    expect(got).toEqual(c.expect);
    if (!c.expect.ok || c.notes.length !== 1) return;
    // Accepted: a second way, with node:crypto alone — the tag line, canonical JSON (members sorted, no white space), both signatures.
    const note = c.notes[0]!;
    const text = note.slice(0, note.indexOf('\n\n') + 1);
    const [tag, json, end] = text.split('\n');
    expect([tag, end]).toEqual(['tally/v1/log-identity', '']);
    const doc = JSON.parse(json!) as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual(Object.keys(doc).sort());
    expect(JSON.stringify(doc)).toBe(json);
    expect(noteTextSignedBy(note, ids.rootKey)).toBe(text);
    expect(noteTextSignedBy(note, doc['log_key'] as string)).toBe(text);
    expect((doc['log_key'] as string).split('+')[0]).toBe(doc['origin']);
  });

  it('every refusal code is exercised', () => {
    const seen = new Set(ids.cases.flatMap((c) => (c.expect.ok ? [] : [c.expect.code])));
    expect([...seen].sort()).toEqual([...LOG_IDENTITY_CODES].sort());
  });
});

/** The text of `note` when `vkey` signed it (node:crypto alone), else undefined. */
function noteTextSignedBy(note: string, vkey: string): string | undefined {
  const [name, keyIdHex, ...rest] = vkey.split('+') as [string, string, ...string[]];
  const b64 = rest.join('+');
  const pub = Buffer.from(b64, 'base64').subarray(1);
  const cut = note.indexOf('\n\n');
  const text = note.slice(0, cut + 1);
  const line = note.slice(cut + 2).split('\n').find((l) => l.startsWith(`\u2014 ${name} `));
  if (line === undefined) return undefined;
  const sig = Buffer.from(line.slice(`\u2014 ${name} `.length), 'base64');
  if (sig.subarray(0, 4).toString('hex') !== keyIdHex) return undefined;
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pub.toString('base64url') }, format: 'jwk' });
  return cryptoVerify(null, Buffer.from(text), key, sig.subarray(4)) ? text : undefined;
}

interface DayCase {
  name: string;
  leaves: string[];
  checkpoint: string | null;
  binding: { index: number; leaf: CheckpointLeaf; log: { size: number; root: string } };
  maxLeaves?: number;
  seed: string;
  expect: { ok: true; leaves: number; sameOrigin: number[] } | { ok: false; code: string; leaves?: number[]; roots?: string[] };
  monitor: { ok: true } | { ok: false; kind: string; code?: string; leaves?: number[] };
}
const days = loadVectors<{ days: { logKey: string; session: string; origin: string; entries: string[]; cases: DayCase[] } }>('engine-log.json').days;

/** The case's log as a tlog-tiles source: its checkpoint (absent when null) and its entry bundles. */
function sourceOf(c: DayCase): LogSource {
  const leaves = c.leaves.map((l) => new Uint8Array(Buffer.from(l, 'hex')));
  return async (path) => {
    if (path === 'checkpoint') return c.checkpoint === null ? { ok: false, message: 'not served' } : { ok: true, body: new TextEncoder().encode(c.checkpoint) };
    const ref = parseTilePath(path);
    if (ref?.kind !== 'entries' || ref.index * 256 + ref.width > leaves.length) return { ok: false, message: `${path} not served` };
    return { ok: true, body: entryBundle(leaves.slice(ref.index * 256, ref.index * 256 + ref.width)) };
  };
}
/** The day's tree, naively (RFC 6962 §2.1 over its entries' bytes). */
const dayLeafHashes = days.entries.map((e) => h(new Uint8Array([0]), Buffer.from(e)));
const dayRootAt = (n: number) => (n <= dayLeafHashes.length ? hexOf(mth(dayLeafHashes.slice(0, n))) : undefined);
const verifierGot = (r: CheckDayInLogResult) => (r.ok ? { ok: true, leaves: r.leaves, sameOrigin: r.sameOrigin } : { ok: false, code: r.code, ...(r.leaves ? { leaves: r.leaves, roots: r.roots } : {}) });
function monitorGot(r: LogMonitorResult) {
  if (r.ok) return { ok: true };
  if (r.kind === 'equivocation') return { ok: false, kind: r.kind, code: r.code, leaves: r.leaves.map((e) => e.index) };
  if (r.kind === 'session-mismatch') return { ok: false, kind: r.kind, code: r.code, leaves: [r.leaf.index] };
  if (r.kind === 'fork') return { ok: false, kind: r.kind, code: r.code };
  return { ok: false, kind: r.kind };
}

/**
 * §15.10's three conflicts of the day's origin, read naively from the leaves' JSON (no library code):
 * the first other checkpoint leaf of the origin at the day's size with another root, or past its seal;
 * then the first whose root is not the day's tree at its size.
 */
function naiveConflict(c: DayCase): { code: string; leaves: number[]; roots: string[] } | undefined {
  const tag = 'tally/v1/engine-log-leaf\0';
  const day = c.binding.leaf;
  const others: { i: number; size: number; root: string; seal: boolean }[] = [];
  c.leaves.forEach((l, i) => {
    const text = Buffer.from(l, 'hex').toString();
    if (!text.startsWith(tag) || i === c.binding.index) return;
    const j = JSON.parse(text.slice(tag.length)) as { kind: string; origin?: string; size: number; root: string; seal: boolean };
    if (j.kind === 'checkpoint' && j.origin === day.origin) others.push({ i, ...j });
  });
  for (const o of others) {
    if (o.size === day.size && o.root !== day.root) return { code: 'TALLY_LOG_EQUIVOCATION', leaves: [c.binding.index, o.i], roots: [day.root, o.root] };
    if ((day.seal && o.size > day.size) || (o.seal && day.size > o.size)) return { code: 'TALLY_LOG_INCONSISTENT', leaves: [c.binding.index, o.i], roots: [day.root, o.root] };
  }
  for (const o of others) {
    const tree = dayRootAt(o.size);
    if (tree !== undefined && tree !== o.root) return { code: 'TALLY_LOG_SESSION_MISMATCH', leaves: [c.binding.index, o.i], roots: [o.root, tree] };
  }
  return undefined;
}

describe('engine-log.json days in the log (§15.10)', () => {
  it.each(days.cases.map((c) => [c.name, c] as const))('%s', async (_n, c) => {
    const r = await checkDayInLog({ source: sourceOf(c), logVerifiers: [days.logKey], binding: c.binding, rootAt: dayRootAt, ...(c.maxLeaves === undefined ? {} : { maxLeaves: c.maxLeaves }) });
    expect(verifierGot(r)).toEqual(c.expect);
    const sessions = async (id: string, from: number, to: number) => ({ ok: true as const, entries: id === days.session ? days.entries.slice(from, to).map((e) => new TextEncoder().encode(e)) : [] });
    const m = await monitorEngineLog({ source: sourceOf(c), logVerifiers: [days.logKey], rounds: 1, seed: c.seed, sessions });
    expect(monitorGot(m)).toEqual(c.monitor);
    // A second way for the three conflicts, on a log whose checkpoint is the tree of its leaves (naive MTH) under the pinned key.
    if (c.checkpoint === null || noteSignedBy(c.checkpoint, days.logKey) === undefined) return;
    const lh = c.leaves.map((l) => h(new Uint8Array([0]), Buffer.from(l, 'hex')));
    const cp = noteSignedBy(c.checkpoint, days.logKey)!;
    if (cp.size !== lh.length || hexOf(mth(lh)) !== hexOf(cp.root) || hexOf(mth(lh.slice(0, c.binding.log.size))) !== c.binding.log.root) return;
    if (c.expect.ok || ['TALLY_LOG_EQUIVOCATION', 'TALLY_LOG_INCONSISTENT', 'TALLY_LOG_SESSION_MISMATCH'].includes(c.expect.code)) {
      const n = naiveConflict(c);
      expect(n === undefined ? { ok: true } : { ok: false, ...n }).toEqual(c.expect.ok ? { ok: true } : { ok: false, code: c.expect.code, leaves: c.expect.leaves, roots: c.expect.roots });
    }
  });

  it('every refusal code of the verifier is exercised, and the monitor names both leaves of each two-leaf conflict', () => {
    const seen = new Set(days.cases.flatMap((c) => (c.expect.ok ? [] : [c.expect.code])));
    expect([...seen].sort()).toEqual([...DAY_IN_LOG_CODES].sort());
    for (const c of days.cases) {
      if (c.expect.ok || (c.expect.code !== 'TALLY_LOG_EQUIVOCATION' && c.expect.code !== 'TALLY_LOG_INCONSISTENT')) continue;
      expect(c.monitor, c.name).toEqual({ ok: false, kind: 'equivocation', code: c.expect.code, leaves: c.expect.leaves });
    }
  });
});
