/**
 * verifyBundleParallel (worker threads, dist/) against verifyBundle (the
 * sequential reference): equal results — the summary, or the first error's
 * index, code and message — on random valid bundles and on bundles mutated
 * byte-wise and field-wise, with tiny batches so that every batch boundary
 * and every check order is exercised.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainVerifier, LIMITS, canonicalJson, type CanonicalValue, type ChainError, type ChainSummary } from '../../src/protocol/index.js';
import { sha256, splitLines } from '../../src/codec/index.js';
import { createEngine } from '../../src/session/index.js';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import { requireFreshDist } from './helpers/dist.js';

requireFreshDist(['protocol', 'codec']);
const par = await import('../../dist/codec/parallel/index.js');
type Pool = Awaited<ReturnType<typeof par.createVerifyPool>>;

const enc = new TextEncoder();
let pool: Pool;
/** The same on worker threads (the only pool `split: 'records'` takes). */
let threads: Pool;
beforeAll(() => {
  pool = par.createVerifyPool({ workers: 2 });
  threads = par.createVerifyPool({ workers: 2, mode: 'threads' });
});
afterAll(async () => {
  await Promise.all([pool.close(), threads.close()]);
});

interface DayPlan {
  readonly name: string;
  readonly wakes: ReadonlyArray<{ readonly dt: number; readonly data?: CanonicalValue; readonly body: { kind: 'authored'; text: string } | { kind: 'stand-down' } }>;
  readonly seal: boolean;
}

const scalar = fc.oneof(fc.string({ maxLength: 8 }), fc.integer({ min: -1000, max: 1000 }), fc.boolean());
const plan: fc.Arbitrary<DayPlan> = fc.record({
  name: fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s.trim().length > 0 && s.trim() === s),
  wakes: fc.array(
    fc.record(
      {
        dt: fc.nat({ max: 5000 }),
        data: fc.dictionary(fc.string({ maxLength: 4 }), scalar, { maxKeys: 3 }),
        body: fc.oneof(fc.record({ kind: fc.constant('authored' as const), text: fc.string({ maxLength: 40 }) }), fc.constant({ kind: 'stand-down' as const })),
      },
      { requiredKeys: ['dt', 'body'] },
    ),
    { maxLength: 12 },
  ),
  seal: fc.boolean(),
});

async function build(p: DayPlan): Promise<Uint8Array[]> {
  const engine = createEngine();
  const open = await engine.open({ name: p.name, plan: 'parallel' });
  if (!open.ok) throw new Error(open.message);
  const sid = open.sessionId;
  let time = 1000;
  for (let i = 0; i < p.wakes.length; i++) {
    const w = p.wakes[i]!;
    time += w.dt;
    const f = await engine.frame({ sessionId: sid, ordinal: i - 1, time, ...(w.data === undefined ? {} : { data: w.data }) });
    if (!f.ok) throw new Error(f.message);
    const body = w.body.kind === 'authored' ? { kind: 'authored', bytes: enc.encode(w.body.text) } : { kind: 'stand-down', failureClass: 'timeout' };
    const t = await engine.turn({ sessionId: sid, ordinal: i - 1, parentHash: f.entryHash, frameRoot: f.frameRoot, body });
    if (!t.ok) throw new Error(t.message);
  }
  if (p.seal) {
    const fin = await engine.finalize(sid, { note: 'x' });
    if (!fin.ok) throw new Error(fin.message);
  }
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) lines.push(l);
  return lines;
}

const td = new TextDecoder();
/** Re-encodes line `i` canonically after `edit` changes its parsed value. */
function editLine(lines: Uint8Array[], i: number, edit: (v: Record<string, unknown>) => void): Uint8Array[] {
  const out = lines.slice();
  const v = JSON.parse(td.decode(lines[i]!)) as Record<string, unknown>;
  edit(v);
  out[i] = enc.encode(canonicalJson(v as CanonicalValue));
  return out;
}
const flipHex = (h: unknown, k: number): string => {
  const s = String(h);
  const j = k % 64;
  return s.slice(0, j) + (s[j] === '0' ? '1' : '0') + s.slice(j + 1);
};

type Mutation = (lines: Uint8Array[], k: number) => Uint8Array[] | Uint8Array;
const MUTATIONS: Record<string, Mutation> = {
  flipByte: (l, k) => {
    const b = encodeBundle(l).slice();
    const at = k % b.length;
    b[at] = b[at]! ^ (1 << k % 8);
    return b;
  },
  dropLine: (l, k) => l.filter((_, i) => i !== k % l.length),
  duplicateLine: (l, k) => [...l.slice(0, (k % l.length) + 1), ...l.slice(k % l.length)],
  swapLines: (l, k) => {
    const out = l.slice();
    const i = k % l.length;
    const j = (k * 7 + 1) % l.length;
    [out[i], out[j]] = [out[j]!, out[i]!];
    return out;
  },
  truncateTail: (l, k) => encodeBundle(l).subarray(0, Math.max(0, encodeBundle(l).length - 1 - (k % 3))),
  badUtf8: (l, k) => {
    const out = l.slice();
    out[k % l.length] = Uint8Array.from([0x7b, 0xff, 0x7d]);
    return out;
  },
  bom: (l, k) => {
    const out = l.slice();
    const i = k % l.length;
    out[i] = Uint8Array.from([0xef, 0xbb, 0xbf, ...l[i]!]);
    return out;
  },
  whitespace: (l, k) => {
    const out = l.slice();
    const i = k % l.length;
    out[i] = Uint8Array.from([...l[i]!, 0x20]);
    return out;
  },
  afterSeal: (l) => [...l, l[1] ?? l[0]!],
  emptyLine: (l, k) => [...l.slice(0, k % l.length), new Uint8Array(), ...l.slice(k % l.length)],
  ordinal: (l, k) => {
    const idx = l.findIndex((b, i) => i >= k % l.length && /"kind":"(frame|turn)"/.test(td.decode(b)));
    return idx < 0 ? l : editLine(l, idx, (v) => (v['ordinal'] = (v['ordinal'] as number) + (k % 2 ? 1 : -1)));
  },
  time: (l, k) => {
    const idx = l.findIndex((b, i) => i >= k % l.length && td.decode(b).includes('"kind":"frame"'));
    return idx < 0 ? l : editLine(l, idx, (v) => (v['time'] = 0));
  },
  frameRoot: (l, k) => {
    const idx = l.findIndex((b, i) => i >= k % l.length && td.decode(b).includes('"frameRoot"'));
    return idx < 0 ? l : editLine(l, idx, (v) => (v['frameRoot'] = flipHex(v['frameRoot'], k)));
  },
  session: (l, k) => editLine(l, 1 + (k % Math.max(1, l.length - 1)) >= l.length ? l.length - 1 : 1 + (k % (l.length - 1)), (v) => (v['session'] = flipHex(v['session'], k))),
  parent: (l, k) => editLine(l, Math.min(l.length - 1, 1 + (k % Math.max(1, l.length - 1))), (v) => (v['parent'] = flipHex(v['parent'], k))),
  authoredHash: (l, k) => {
    const idx = l.findIndex((b, i) => i >= k % l.length && td.decode(b).includes('"kind":"authored"'));
    return idx < 0 ? l : editLine(l, idx, (v) => {
      const body = v['body'] as Record<string, unknown>;
      body['hash'] = flipHex(body['hash'], k);
    });
  },
  authoredBytes: (l, k) => {
    const idx = l.findIndex((b, i) => i >= k % l.length && td.decode(b).includes('"kind":"authored"'));
    return idx < 0 ? l : editLine(l, idx, (v) => {
      const body = v['body'] as Record<string, unknown>;
      body['bytes'] = k % 2 ? `${String(body['bytes'])}=` : 'AB==';
    });
  },
  sealSize: (l) => {
    const idx = l.findIndex((b) => td.decode(b).includes('"kind":"finalize"'));
    return idx < 0 ? l : editLine(l, idx, (v) => (v['size'] = (v['size'] as number) + 1));
  },
  sealRoot: (l, k) => {
    const idx = l.findIndex((b) => td.decode(b).includes('"kind":"finalize"'));
    return idx < 0 ? l : editLine(l, idx, (v) => (v['root'] = flipHex(v['root'], k)));
  },
  noGenesis: (l) => l.slice(1),
  secondGenesis: (l, k) => [...l.slice(0, 1 + (k % l.length)), l[0]!, ...l.slice(1 + (k % l.length))],
  badStructure: (l, k) => editLine(l, k % l.length, (v) => (v['extra'] = 1)),
};

function chunked(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let o = 0; o < bytes.length; o += size) out.push(bytes.subarray(o, o + size));
  return out;
}

/** verifyBundle as first written (line by line over splitLines): the reference for the chunk-wise loop too. */
async function legacyVerify(chunks: Uint8Array[], requireSealed: boolean): Promise<ChainSummary | ChainError> {
  const v = new ChainVerifier(sha256);
  for await (const { line, terminated } of splitLines(chunks)) {
    if (!terminated) {
      if (line.length > LIMITS.entryBytes) return v.reject('too-large', `entry exceeds ${LIMITS.entryBytes} bytes`);
      return v.reject('missing-newline', 'the last line has no terminating newline (truncated?)');
    }
    const r = v.push(line);
    if (!r.ok) return r;
  }
  return v.finish({ requireSealed });
}

/**
 * Both ways of sharing the work: per-line records (`split: 'records'`, tiny
 * batches), and segments (the default) of 100–1,000 bytes, so that a segment
 * holds from one line to a few and every segment boundary meets every check.
 */
async function both(bytes: Uint8Array, chunk: number, batchLines: number, requireSealed: boolean) {
  const seq = await verifyBundle(chunked(bytes, chunk), { requireSealed });
  expect(seq).toEqual(await legacyVerify(chunked(bytes, chunk), requireSealed));
  const records = await par.verifyBundleParallel(chunked(bytes, chunk), { pool: threads, split: 'records', batchLines, maxInFlight: 2, requireSealed });
  expect(records).toEqual(seq);
  const p = await par.verifyBundleParallel(chunked(bytes, chunk), { pool, segmentBytes: 100 * batchLines + (chunk % 500), requireSealed });
  expect(await par.verifyBundleParallel(chunked(bytes, chunk), { pool: threads, segmentBytes: 100 * batchLines + (chunk % 500), requireSealed })).toEqual(p);
  return { seq, p };
}

describe('verifyBundleParallel', () => {
  it('equals verifyBundle on random valid bundles (seed 0xb0d1)', async () => {
    await fc.assert(
      fc.asyncProperty(plan, fc.integer({ min: 1, max: 5 }), fc.integer({ min: 7, max: 900 }), async (p, batchLines, chunk) => {
        const bytes = encodeBundle(await build(p));
        const { seq, p: got } = await both(bytes, chunk, batchLines, p.seal);
        expect(seq.ok).toBe(true);
        expect(got).toEqual(seq);
      }),
      { seed: 0xb0d1, numRuns: 60 },
    );
  });

  it('reports the same first error on mutated bundles (seed 0xb0d2)', async () => {
    const names = Object.keys(MUTATIONS);
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(plan, fc.constantFrom(...names), fc.nat(), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 5, max: 700 }), async (p, name, k, batchLines, chunk) => {
        const lines = await build(p);
        const m = MUTATIONS[name]!(lines, k);
        const bytes = m instanceof Uint8Array ? m : encodeBundle(m);
        const { seq, p: got } = await both(bytes, chunk, batchLines, true);
        if (!seq.ok) seen.add(seq.code);
        expect(got).toEqual(seq);
      }),
      { seed: 0xb0d2, numRuns: 400 },
    );
    // The mutations reach the order-dependent checks, not only the parse errors.
    for (const code of ['not-json', 'not-canonical', 'bad-structure', 'broken-link', 'wrong-session', 'bad-ordinal', 'bad-frame-root', 'bad-authored-hash', 'bad-authored-bytes', 'missing-newline', 'not-genesis', 'after-seal']) {
      expect(seen, code).toContain(code);
    }
  });

  it('equals verifyBundle with pins, unsealed bundles and an empty input', async () => {
    const lines = await build({ name: 'pins', wakes: [{ dt: 1, body: { kind: 'authored', text: 'a' } }], seal: true });
    const bytes = encodeBundle(lines);
    const ref = await verifyBundle([bytes]);
    if (!ref.ok) throw new Error(ref.code);
    for (const pin of [{ sessionId: ref.sessionId, size: ref.size, receiptRoot: ref.receiptRoot }, { size: ref.size + 1 }, { receiptRoot: '0'.repeat(64) }, { sessionId: '1'.repeat(64) }]) {
      for (const p of [pool, threads]) expect(await par.verifyBundleParallel([bytes], { pool: p, pin })).toEqual(await verifyBundle([bytes], { pin }));
    }
    const unsealed = encodeBundle(lines.slice(0, -1));
    expect(await par.verifyBundleParallel([unsealed], { pool })).toEqual(await verifyBundle([unsealed]));
    for (const p of [pool, threads]) expect(await par.verifyBundleParallel([unsealed], { pool: p, requireSealed: false })).toEqual(await verifyBundle([unsealed], { requireSealed: false }));
    expect(await par.verifyBundleParallel([], { pool })).toEqual(await verifyBundle([]));
    // A line over the entry limit, and a partial line longer than any entry (cut short: unterminated).
    const huge = new Uint8Array(1_200_000).fill(0x61);
    for (const tail of [Uint8Array.from([...huge.subarray(0, 10), 0x0a]), huge, Uint8Array.from([...huge, ...huge, 0x0a])]) {
      const b = new Uint8Array(bytes.length + tail.length);
      b.set(bytes.subarray(0, bytes.length - 1));
      b.set(tail, bytes.length - 1);
      for (const requireSealed of [true, false]) {
        const { seq, p } = await both(b, 1 << 20, 3, requireSealed);
        expect(p).toEqual(seq);
      }
    }
    const tooLarge = Uint8Array.from([...huge, 0x0a]);
    expect(await par.verifyBundleParallel([tooLarge], { pool })).toEqual(await verifyBundle([tooLarge]));
  });

  it('verifyBundleFile with parallel: true gives the sequential result', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { verifyBundleFile } = await import('../../dist/codec/index.js');
    const dir = mkdtempSync(join(tmpdir(), 'tally-par-'));
    const lines = await build({ name: 'file', wakes: [{ dt: 1, body: { kind: 'stand-down' } }, { dt: 2, body: { kind: 'authored', text: 'x' } }], seal: true });
    const good = join(dir, 'good.jsonl');
    writeFileSync(good, encodeBundle(lines));
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, encodeBundle(MUTATIONS['sealRoot']!(lines, 3) as Uint8Array[]));
    for (const f of [good, bad]) expect(await verifyBundleFile(f, { parallel: { pool } })).toEqual(await verifyBundleFile(f));
  });
});

describe('the pool of child processes', () => {
  it('refuses what it cannot do with typed errors: records, a bad mode, a closed pool', async () => {
    const lines = await build({ name: 'modes', wakes: [{ dt: 1, body: { kind: 'authored', text: 'x' } }], seal: true });
    await expect(par.verifyBundleParallel([encodeBundle(lines)], { pool, split: 'records' })).rejects.toMatchObject({ code: 'TALLY_VERIFY_OPTIONS_INVALID' });
    expect(() => par.createVerifyPool({ mode: 'fibers' as 'threads' })).toThrow(expect.objectContaining({ code: 'TALLY_VERIFY_POOL_INVALID' }));
    const spent = par.createVerifyPool({ workers: 1 });
    await spent.close();
    await expect(par.verifyBundleParallel([encodeBundle(lines)], { pool: spent, segmentBytes: 64 })).rejects.toMatchObject({ code: 'TALLY_VERIFY_POOL_CLOSED' });
  });

  it('a script that awaits close() at top level ends with exit code 0 once its children have exited', async () => {
    const { spawnSync } = await import('node:child_process');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join, resolve } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'tally-close-'));
    const bundle = join(dir, 'day.jsonl');
    writeFileSync(bundle, encodeBundle(await build({ name: 'close', wakes: [{ dt: 1, body: { kind: 'authored', text: 'x' } }], seal: true })));
    const script = join(dir, 'close.mjs');
    const index = resolve(import.meta.dirname, '../../dist/codec/parallel/index.js');
    writeFileSync(
      script,
      `import { readFileSync } from 'node:fs';\nconst par = await import(${JSON.stringify(index)});\nconst pool = par.createVerifyPool({ workers: 1 });\nconst r = await par.verifyBundleParallel([readFileSync(${JSON.stringify(bundle)})], { pool, segmentBytes: 64 });\nconsole.log(JSON.stringify({ ok: r.ok, pids: pool.pids() }));\nawait pool.close();\nconsole.log('closed');\n`,
    );
    const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    const [first, last] = r.stdout.trim().split('\n');
    const { ok, pids } = JSON.parse(first!) as { ok: boolean; pids: number[] };
    expect(ok).toBe(true);
    expect(last).toBe('closed');
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
  });

  it('fails the verification with TALLY_VERIFY_WORKER_FAILED when a child dies, and never leaves a child behind', async () => {
    const wakes = Array.from({ length: 400 }, (_, i) => ({ dt: 1, body: { kind: 'authored' as const, text: `t${i}` } }));
    const bytes = encodeBundle(await build({ name: 'killed', wakes, seal: true }));
    const own = par.createVerifyPool({ workers: 2 });
    try {
      const ok = await par.verifyBundleParallel([bytes], { pool: own, segmentBytes: 2048 });
      expect(ok.ok).toBe(true);
      const pids = own.pids();
      expect(pids).toHaveLength(2);
      process.kill(pids[0]!, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 200));
      await expect(par.verifyBundleParallel([bytes], { pool: own, segmentBytes: 2048 })).rejects.toMatchObject({ code: 'TALLY_VERIFY_WORKER_FAILED' });
    } finally {
      await own.close();
    }
    const alive = own.pids().filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    expect(alive).toEqual([]);
  });
});
