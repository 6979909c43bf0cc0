/**
 * The byte-level line checker (src/protocol/scan.ts) and the verifiers' fast
 * paths built on it, against the reference path (`byteScan: false`: every line
 * through inspectLine and the object checks). Same verdict — the summary, or
 * the first error's index, code and message — and the same verified entries,
 * on engine-made days with arbitrary frame data, on arbitrary byte edits of
 * their lines (re-linked, so that later lines stay consistent with the edited
 * one), on the whole conformance corpus (docs/vectors/bundles.json) and on the
 * parallel verifier's worker records. And the scanner's own claim: a line it
 * proves (with its caller's hex and base64 checks) is one the reference
 * accepts, with the same entry.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeBundle, sha256 } from '../../src/codec/index.js';
import { analyzeBatch } from '../../src/codec/parallel/analyze.js';
import { ChainVerifier, DOMAIN_TAGS, fromBase64, taggedHash, toHex, isDigestHex, tryCanonicalJson, verifyChunks, type CanonicalValue, type ChainError, type ChainSummary, type FrameEntry, type VerifiedEntry } from '../../src/protocol/index.js';
import { frameRootHex, inspectLine } from '../../src/protocol/chain.js';
import { entryOfScan } from '../../src/protocol/scan-entry.js';
import { newLineScan, scanLine } from '../../src/protocol/scan.js';
import { createEngine } from '../../src/session/index.js';
import { bundleBytes, bundleCases, loadVectors } from '../conformance/corpus.js';
import { scanValue } from '../../src/protocol/scan-value.js';
import { relink } from '../helpers/relink.js';

const SEED = 0x5ca9;
const enc = new TextEncoder();
const latin1 = new TextDecoder('latin1');

/** Canonical-domain values (no null, no fractions, safe integers), strings of any code points. */
const canonicalValue: fc.Arbitrary<CanonicalValue> = fc.letrec<{ v: CanonicalValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.string({ unit: 'binary', maxLength: 6 }),
    fc.constantFrom('', 'a"b', 'back\\slash', 'tab\t', '\u0001', '\u00e9', '\u2028', '\ud83d\ude00', '\uffff', '\ue000'),
    fc.integer(),
    fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
    fc.boolean(),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('\u00e9', '\ud83d\ude00', '\uffff', 'A', 'a', '_')), tie('v'), { maxKeys: 3 }),
  ),
})).v;

/** A day on the engine: frames with the given data (or none), authored and stand-down turns (ruled: rulings), a seal with artifacts. */
async function day(data: ReadonlyArray<CanonicalValue | undefined>, name: string): Promise<Uint8Array[]> {
  const engine = createEngine();
  const open = await engine.open({ name, day: 1 });
  if (!open.ok) throw new Error(open.message);
  const sid = open.sessionId;
  for (let ord = -1; ord < data.length - 1; ord++) {
    const d = data[ord + 1];
    const f = await engine.frame({ sessionId: sid, ordinal: ord, time: 1000 + 7 * (ord + 1), ...(d === undefined ? {} : { data: d }) });
    if (!f.ok) throw new Error(f.message);
    const body = ord % 3 === 1 ? ({ kind: 'stand-down', failureClass: 'malformed' } as const) : ({ kind: 'authored', bytes: enc.encode(`turn ${ord}`.repeat((ord + 2) % 5)) } as const);
    const t = await engine.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body });
    if (!t.ok) throw new Error(t.message);
  }
  const fin = await engine.finalize(sid, { note: 'scan' });
  if (!fin.ok) throw new Error(fin.message);
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) lines.push(l);
  return lines;
}

type Step = ChainError | VerifiedEntry;
/** Every line through one ChainVerifier (push and the verdict-only accept alike), then finish. */
function run(lines: readonly Uint8Array[], byteScan: boolean): { steps: Step[]; accepted: Array<ChainError | undefined>; end: ChainSummary | ChainError } {
  const v = new ChainVerifier(sha256, { byteScan });
  const a = new ChainVerifier(sha256, { byteScan });
  const steps = lines.map((l) => v.push(l));
  const accepted = lines.map((l) => a.accept(l));
  const end = v.finish();
  expect(a.finish()).toEqual(end);
  return { steps, accepted, end };
}

/**
 * The fast and the reference verifier agree on these lines, line by line and
 * at the end; and so does the verdict-only loop over the bundle's bytes
 * (`acceptAt` on each chunk, lines split across chunks carried), chunked
 * whole, in 97-byte pieces and in 4 KiB ones.
 */
async function agree(lines: readonly Uint8Array[]): Promise<ChainSummary | ChainError> {
  const fast = run(lines, true);
  const ref = run(lines, false);
  expect(fast).toEqual(ref);
  const bytes = encodeBundle(lines);
  for (const size of [bytes.length, 97, 4096]) {
    const chunks: Uint8Array[] = [];
    for (let o = 0; o < bytes.length; o += size) chunks.push(bytes.subarray(o, o + size));
    expect(await verifyChunks(sha256, chunks)).toEqual(ref.end);
  }
  return ref.end;
}

/** The worker records of the fast and the reference analysis are the same bytes and failures. */
function recordsAgree(lines: readonly Uint8Array[]): void {
  const bytes = encodeBundle(lines);
  const ends = new Uint32Array(lines.length);
  let at = 0;
  const joined = new Uint8Array(bytes.length - lines.length);
  lines.forEach((l, i) => {
    joined.set(l, at);
    ends[i] = at += l.length;
  });
  const fast = analyzeBatch(0, joined, ends);
  const ref = analyzeBatch(0, joined, ends, { byteScan: false });
  expect(new Uint8Array(fast.records)).toEqual(new Uint8Array(ref.records));
  expect(fast.failures).toEqual(ref.failures);
}

/** A line the scanner proves, whose digests are hex and whose body is base64 (the caller's half), is the reference's entry. */
function scanSound(line: Uint8Array): boolean {
  const s = newLineScan();
  if (!scanLine(line, s)) return false;
  const hexOk = [s.session, s.parent, s.root, ...(s.kind === 2 && s.body === 1 ? [s.hashAt] : [])].every((at) => isDigestHex(latin1.decode(line.subarray(at, at + 64))));
  const b64Ok = !(s.kind === 2 && s.body === 1) || fromBase64(latin1.decode(line.subarray(s.bytesStart, s.bytesEnd))) !== undefined;
  if (!hexOk || !b64Ok) return false;
  const ref = inspectLine(sha256, line);
  expect(ref.ok, latin1.decode(line)).toBe(true);
  if (ref.ok) expect(entryOfScan(line, s)).toEqual(ref.entry);
  return true;
}

type Edit = (b: Uint8Array, at: number, x: number) => Uint8Array;
const splice = (b: Uint8Array, at: number, del: number, ins: readonly number[]): Uint8Array => Uint8Array.from([...b.subarray(0, at), ...ins, ...b.subarray(at + del)]);
// Bytes that matter to the grammar, to UTF-8 and to number forms.
const SHARP = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x2d, 0x30, 0x31, 0x39, 0x2e, 0x65, 0x20, 0x00, 0x1f, 0x7f, 0x80, 0xbf, 0xc0, 0xc2, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x3d, 0x2b, 0x41, 0x61, 0x66, 0x67];
const EDITS: Record<string, Edit> = {
  flip: (b, at, x) => splice(b, at % b.length, 1, [b[at % b.length]! ^ (1 << (x % 8))]),
  sharp: (b, at, x) => splice(b, at % b.length, 1, [SHARP[x % SHARP.length]!]),
  insert: (b, at, x) => splice(b, at % (b.length + 1), 0, [SHARP[x % SHARP.length]!]),
  delete: (b, at) => splice(b, at % b.length, 1, []),
  digit: (b, at, x) => {
    // Rewrites one digit, keeping the line canonical more often: ordinals, times, sizes.
    const digits = [...b.keys()].filter((i) => b[i]! >= 0x30 && b[i]! <= 0x39 && b[i - 1] === 0x3a);
    if (digits.length === 0) return b;
    return splice(b, digits[at % digits.length]!, 1, [0x30 + (x % 10)]);
  },
  truncate: (b, at) => b.subarray(0, at % b.length),
};
// Edits of a field's value that keep the line canonical and its frame root true to
// its content (recomputed), so that only the chain checks can refuse it.
const dec = new TextDecoder();
const asEntry = (f: (v: Record<string, any>, x: number) => void): Edit => (b, _at, x) => {
  let v: Record<string, any>;
  try {
    v = JSON.parse(dec.decode(b)) as Record<string, any>;
  } catch {
    return b;
  }
  if (typeof v !== 'object' || v === null) return b;
  f(v, x);
  let c = tryCanonicalJson(v);
  if (!c.ok) return b;
  if (v['kind'] === 'frame' && typeof v['ordinal'] === 'number' && typeof v['time'] === 'number') v['frameRoot'] = frameRootHex(sha256, v as FrameEntry);
  c = tryCanonicalJson(v);
  return c.ok ? enc.encode(c.text) : b;
};
EDITS['time'] = asEntry((v, x) => {
  if (typeof v['time'] === 'number') v['time'] = [0, v['time'] - 1, v['time'] + 1, 2 ** 53 - 1, -1][x % 5];
});
EDITS['ordinal'] = asEntry((v, x) => {
  if (typeof v['ordinal'] === 'number') v['ordinal'] = [v['ordinal'] - 1, v['ordinal'] + 1, -2, 2 ** 40 + 1][x % 4];
});
EDITS['size'] = asEntry((v, x) => {
  if (typeof v['size'] === 'number') v['size'] += x % 2 === 0 ? -1 : 1;
});
EDITS['data'] = asEntry((v, x) => {
  v['data'] = [{ b: 1, a: 2 }, 'x', [[[]]], { 'é': 1, e: 2 }, -0, 0][x % 6];
});
EDITS['body'] = asEntry((v, x) => {
  if (v['kind'] === 'turn') v['body'] = [{ kind: 'stand-down', failureClass: 'timeout' }, { kind: 'authored', bytes: 'YQ==', hash: 'ab'.repeat(32) }, { kind: 'authored', bytes: 'YR==', hash: 'ab'.repeat(32) }][x % 3];
});
// Number forms JSON.parse maps to canonical values, spelled otherwise: -0, 1.0, 1e0, 01.
EDITS['number'] = (b, _at, x) => {
  const t = dec.decode(b);
  return enc.encode(t.replace(/("(?:data|q|ordinal|time|size)":)(\d+)/, (_m, k: string, n: string) => k + ['-0', `${n}.0`, `${n}e0`, `0${n}`, `-${n}`][x % 5]));
};
// A forger's frame: `data` spelled in a way JSON.parse accepts but canonical JSON
// does not (or not JSON at all), with the frame root computed over those very
// bytes, so that only the one-encoding rule can refuse the line.
const u8 = (...parts: Array<string | number[]>): Uint8Array => {
  const bs = parts.map((p) => (typeof p === 'string' ? enc.encode(p) : Uint8Array.from(p)));
  const out = new Uint8Array(bs.reduce((n, x) => n + x.length, 0));
  let o = 0;
  for (const x of bs) (out.set(x, o), (o += x.length));
  return out;
};
const FORGED: ReadonlyArray<Uint8Array> = [
  ...['-0', '1.0', '1e0', '01', '-', '9007199254740992', '-9007199254740992', '{"b":1,"a":2}', '{"a":1,"a":1}', String.raw`{"\u00e9":1}`, '{"é":1,"e":2}', String.raw`{"\ud83d\ude00":1,"\uffff":2}`, '{"\u{1F600}":1,"\uffff":2}', '{"\uffff":1,"\u{1F600}":2}', String.raw`"\u0061"`, String.raw`"\/"`, String.raw`"\ud800"`, '[ 1]', '[1,]', 'null', 'true ', 'tru', `${'['.repeat(63)}${']'.repeat(63)}`, `${'['.repeat(64)}${']'.repeat(64)}`, String.raw`"\u001f"`, String.raw`"\n"`, String.raw`"\u000a"`].map((t) => enc.encode(t)),
  u8('"a', [0x01], '"'), u8('"', [0xff], '"'), u8('"', [0xed, 0xa0, 0x80], '"'), u8('"', [0xc0, 0xaf], '"'), u8('"', [0xf4, 0x90, 0x80, 0x80], '"'), u8('"', [0xe2, 0x82], '"'), u8('"', [0xf0, 0x9f, 0x98, 0x80], '"'),
];
EDITS['forge'] = (b, _at, x) => {
  let v: Record<string, any>;
  try {
    v = JSON.parse(dec.decode(b)) as Record<string, any>;
  } catch {
    return b;
  }
  if (v['kind'] !== 'frame') return b;
  const raw = FORGED[x % FORGED.length]!;
  const tail = `,"ordinal":${v['ordinal']},"time":${v['time']}}`;
  const root = toHex(taggedHash(sha256, DOMAIN_TAGS.frameRoot, u8('{"data":', [...raw], tail)));
  return u8('{"data":', [...raw], `,"frameRoot":"${root}","kind":"frame","ordinal":${v['ordinal']},"parent":"${v['parent']}","session":"${v['session']}","time":${v['time']}}`);
};
// The same values in another key order: never canonical.
EDITS['reorder'] = (b) => {
  const t = dec.decode(b);
  const m = /"data":\{"([^"\\]*)":((?:[^{}\[\],]|"[^"]*")+),"([^"\\]*)":((?:[^{}\[\],]|"[^"]*")+)\}/.exec(t);
  return m ? enc.encode(t.replace(m[0], `"data":{"${m[3]}":${m[4]},"${m[1]}":${m[2]}}`)) : b;
};
const edit = fc.record({ kind: fc.constantFrom(...Object.keys(EDITS)), at: fc.nat(), x: fc.nat() });

describe(`the byte-level line checker against the reference (seed ${SEED.toString(16)})`, () => {
  it('valid days with arbitrary frame data: the same verdicts, entries and worker records, and most lines are proven by the scan', async () => {
    let proven = 0;
    let lines = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.option(canonicalValue, { nil: undefined }), { minLength: 1, maxLength: 6 }), async (data) => {
        const ls = await day(data, 'scan-valid');
        expect(await agree(ls)).toMatchObject({ ok: true, size: ls.length });
        recordsAgree(ls);
        for (const l of ls) {
          lines++;
          if (scanSound(l)) proven++;
        }
      }),
      { seed: SEED, numRuns: 60 },
    );
    // Every line but the genesis and the lines whose data needs an escape or a non-ASCII key.
    expect(proven / lines).toBeGreaterThan(0.6);
  });

  it('arbitrary byte edits of a line, re-linked: the same first error (index, code, message) or the same summary', async () => {
    const days = [await day([undefined, undefined, 'x'], 'scan-plain'), await day([{ price: '101', q: 1 }, undefined, { a: { b: [] }, é: 'é' }, 7, { x: '1', y: true }], 'scan-data')];
    const codes = new Set<string>();
    let proven = 0;
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: days.length - 1 }), fc.nat(), fc.array(edit, { minLength: 1, maxLength: 3 }), fc.boolean(), async (d, pick, edits, link) => {
        const ls = days[d]!;
        const at = pick % ls.length;
        const edited = edits.reduce((b, e) => EDITS[e.kind]!(b, e.at, e.x), ls[at]!);
        if (scanSound(edited)) proven++;
        const bundle = link ? relink(ls, at, edited) : [...ls.slice(0, at), edited, ...ls.slice(at + 1)];
        const end = await agree(bundle);
        recordsAgree(bundle);
        if (!end.ok) codes.add(end.code);
      }),
      { seed: SEED + 1, numRuns: 1000 },
    );
    // The edits reach the chain checks, not only the syntax.
    for (const c of ['not-json', 'not-canonical', 'bad-structure', 'broken-link', 'bad-frame-root', 'bad-authored-hash', 'bad-authored-bytes', 'bad-ordinal', 'time-regressed', 'bad-seal-size']) expect(codes).toContain(c);
    expect(proven).toBeGreaterThan(20);
  });

  it('every hex digit of every digest a line names, changed to another hex digit (not re-linked, and re-linked): the same verdicts', async () => {
    const ls = await day([{ price: '101', q: 1 }, undefined, 7], 'scan-digits');
    const codes = new Set<string>();
    let changed = 0;
    for (let at = 1; at < ls.length; at++) {
      const text = latin1.decode(ls[at]!);
      for (const m of text.matchAll(/"([0-9a-f]{64})"/g)) {
        for (let k = 0; k < 64; k++) {
          const i = m.index! + 1 + k;
          const edited = new Uint8Array(ls[at]!);
          edited[i] = text[i] === '0' ? 0x31 : 0x30;
          for (const bundle of [[...ls.slice(0, at), edited, ...ls.slice(at + 1)], relink(ls, at, edited)]) {
            const end = await agree(bundle);
            if (!end.ok) codes.add(end.code);
          }
          changed++;
        }
      }
    }
    expect(changed).toBeGreaterThan(64 * 3 * (ls.length - 1));
    for (const c of ['wrong-session', 'broken-link', 'bad-frame-root', 'bad-authored-hash', 'bad-seal-root']) expect(codes).toContain(c);
  });

  it('forged frames: every spelling in FORGED, with its frame root over its own bytes, at every frame of a day, re-linked', async () => {
    const ls = await day([{ price: '101', q: 1 }, undefined, 7], 'scan-forged');
    const codes = new Set<string>();
    for (let at = 0; at < ls.length; at++) {
      for (let x = 0; x < FORGED.length; x++) {
        const edited = EDITS['forge']!(ls[at]!, 0, x);
        if (edited === ls[at]) continue;
        const end = await agree(relink(ls, at, edited));
        recordsAgree(relink(ls, at, edited));
        if (end.ok) continue;
        // A canonical spelling is a frame of other content: its turn then names another root.
        codes.add(end.code === 'bad-frame-root' && end.index === at + 1 ? 'canonical' : end.code);
      }
    }
    expect([...codes].sort()).toEqual(['canonical', 'not-canonical', 'not-json', 'not-utf8']);
  });

  it('the canonical-JSON vectors (docs/vectors/canonical.json): no refused text is proven, and the accepted ones the scan can decide are proven whole', () => {
    const v = loadVectors<{ accept: { name: string; hex: string }[]; refuse: { name: string; hex: string }[] }>('canonical.json');
    const proven = (hex: string): boolean => {
      const b = Uint8Array.from(Buffer.from(hex, 'hex'));
      return scanValue(b, 0, 1) === b.length;
    };
    for (const c of v.refuse) expect(proven(c.hex), c.name).toBe(false);
    const decided = v.accept.filter((c) => proven(c.hex)).map((c) => c.name);
    // Escapes are left to the reference; everything else in the accept list is proven.
    expect(v.accept.filter((c) => !decided.includes(c.name)).map((c) => c.name)).toEqual(v.accept.filter((c) => Buffer.from(c.hex, 'hex').includes(0x5c) || /key order by UTF-16/.test(c.name)).map((c) => c.name));
  });

  it('the conformance corpus: both paths give the corpus verdict for every bundle case, through verifyChunks', async () => {
    const cases = bundleCases();
    expect(cases.length).toBeGreaterThan(20);
    for (const c of cases) {
      const bytes = bundleBytes(c);
      const options = c.options ?? {};
      const fast = await verifyChunks(sha256, [bytes], options);
      const ref = await verifyChunks(sha256, [bytes], { ...options, byteScan: false });
      expect(fast, c.name).toEqual(ref);
      expect(fast, c.name).toMatchObject(c.expect.ok ? { ok: true, size: c.expect.size, receiptRoot: c.expect.receiptRoot } : { ok: false, index: c.expect.index, code: c.expect.code });
      // Line by line as well (the verdict-only path and the one that builds entries).
      const lines = splitAll(bytes);
      await agree(lines);
      recordsAgree(lines);
    }
  });
});

/** The newline-terminated lines of a bundle (an unterminated rest is left out). */
function splitAll(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let s = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) (out.push(bytes.subarray(s, i)), (s = i + 1));
  return out;
}
