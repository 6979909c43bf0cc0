/**
 * Core benchmarks (issue: the core): appends per second of unsigned turns on
 * the memory store, and entries per second verified from a bundle — on this
 * thread and with worker threads — each beside the raw SHA-256 rate over the
 * same bytes measured in the same run, with the peak RSS of a fresh process
 * verifying the bundle from disk.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeBundle, sha256, verifyBundle } from '../codec/index.js';
import { createVerifyPool, verifyBundleParallel } from '../codec/parallel/index.js';
import { createEngine } from '../session/index.js';

/** One measured figure and its baseline from the same run. */
export interface Figure {
  readonly name: string;
  readonly perSecond: number;
  readonly baselineName: string;
  readonly baselinePerSecond: number;
  readonly ratio: number;
  readonly note?: string;
}

function rate(n: number, ms: number): number {
  return Math.round((n / ms) * 1000);
}

/**
 * SHA-256 (the project's `sha256`, as every bench baseline) over each buffer,
 * `rounds` times: hashes per second (what a verifier must do at least once per entry).
 */
export function rawHashRate(lines: readonly Uint8Array[], rounds: number): number {
  const t0 = performance.now();
  let n = 0;
  for (let r = 0; r < rounds; r++) for (const l of lines) {
    sha256(l);
    n++;
  }
  return rate(n, performance.now() - t0);
}

interface ChildRun {
  readonly ok: boolean;
  readonly size: number;
  readonly ms: number;
  readonly rssBeforeKb: number;
  readonly maxRssKb: number;
  /** Peak RSS of each of the pool's child processes (none with threads or one thread). */
  readonly childrenMaxRssKb: readonly number[];
}

/** Verifies `path` in a fresh process (sequential or parallel) and reports its time and peak RSS. */
function childVerify(path: string, mode: 'seq' | 'par', workers: number): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL('./verify-child.js', import.meta.url)), path, mode, String(workers)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as ChildRun) : reject(new Error(`verify child exited with ${code}`))));
  });
}

const mb = (kb: number): string => `${Math.round(kb / 1024)} MB`;

/** Ticks (user + system, 1/100 s) in a /proc stat line. */
function statTicks(path: string): number {
  const stat = readFileSync(path, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

/**
 * CPU ticks of each thread of this process (keyed `t<tid>`) and of each of
 * the pool's child processes, all their threads (`p<pid>`): Linux's /proc,
 * else empty.
 */
function cpuTicks(pids: readonly number[]): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const t of readdirSync('/proc/self/task')) out.set(`t${t}`, statTicks(`/proc/self/task/${t}/stat`));
    for (const pid of pids) out.set(`p${pid}`, statTicks(`/proc/${pid}/stat`));
  } catch {
    out.clear();
  }
  return out;
}

/**
 * The CPU per entry of each party during a parallel round (from
 * {@link cpuTicks} before and after): the main thread's, the workers' (the
 * pool's child processes, or the `workers` busiest other threads of a pool
 * of threads), and the rest of this process (V8's helpers, libuv), and what
 * two cores allow at best with that much work in all: entries/s <= 2 cores /
 * (total CPU per entry), even with no waiting.
 */
function threadSplit(before: Map<string, number>, after: Map<string, number>, entries: number, workers: number, hashUs: number): string {
  if (after.size === 0) return 'per-thread CPU not measured (no /proc)';
  const us = (t: number): number => (t * 10_000) / entries;
  const threads: number[] = [];
  const children: number[] = [];
  let main = 0;
  for (const [key, ticks] of after) {
    const d = ticks - (before.get(key) ?? 0);
    if (key === `t${process.pid}`) main = d;
    else if (key.startsWith('p')) children.push(d);
    else threads.push(d);
  }
  threads.sort((a, b) => b - a);
  const pool = children.length > 0 ? children : threads.slice(0, workers);
  const rest = (children.length > 0 ? threads : threads.slice(workers)).reduce((a, b) => a + b, 0);
  const total = main + pool.reduce((a, b) => a + b, 0) + rest;
  const bound = Math.round((2 * 1e6) / us(total));
  const what = children.length > 0 ? 'child processes' : 'worker threads';
  return `CPU per entry: main thread ${us(main).toFixed(2)} µs, ${what} ${pool.map((w) => us(w).toFixed(2)).join(' + ')} µs, other threads ${us(rest).toFixed(2)} µs, in all ${us(total).toFixed(2)} µs against SHA-256 ${hashUs.toFixed(2)} µs, so 2 free cores allow at most ${bound.toLocaleString('en-US')}/s (ratio ${((bound * hashUs) / 1e6).toFixed(3)})`;
}

/** CPU microseconds per entry (this thread) of SHA-256 over each entry, best of 3. */
function hashCpuUs(lines: readonly Uint8Array[]): number {
  let best = Infinity;
  for (let r = 0; r < 3; r++) {
    const t = process.cpuUsage();
    for (const l of lines) sha256(l);
    const u = process.cpuUsage(t);
    best = Math.min(best, u.user + u.system);
  }
  return best / lines.length;
}
const best = (xs: readonly number[]): number => Math.max(...xs);

/** Runs the core benchmarks with `turns` turns. */
export async function benchCore(turns = 50_000): Promise<Figure[]> {
  const engine = createEngine();
  const open = await engine.open({ name: 'bench', turns });
  if (!open.ok) throw new Error(open.message);
  const sid = open.sessionId;
  const enc = new TextEncoder();
  const bodies = Array.from({ length: 64 }, (_, i) => enc.encode(`{"action":"hold","i":${i},"note":"unsigned bench turn"}`));
  // Frames are delivered between turns but only turn appends are timed.
  let turnMs = 0;
  for (let ord = -1; ord < turns - 1; ord++) {
    const f = await engine.frame({ sessionId: sid, ordinal: ord, time: 1_000 + ord });
    if (!f.ok) throw new Error(f.message);
    const t0 = performance.now();
    const t = await engine.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: bodies[(ord + 1) % 64]! } });
    turnMs += performance.now() - t0;
    if (!t.ok) throw new Error(t.message);
  }
  const fin = await engine.finalize(sid);
  if (!fin.ok) throw new Error(fin.message);
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) lines.push(l);
  const turnBytes = lines.filter((_, i) => i % 2 === 0 && i > 0);

  const appendRate = rate(turns, turnMs);
  const hashTurns = rawHashRate(turnBytes, 3);

  const bundle = encodeBundle(lines);
  const chunks: Uint8Array[] = [];
  for (let o = 0; o < bundle.length; o += 1 << 20) chunks.push(bundle.subarray(o, o + (1 << 20)));
  const pool = createVerifyPool();
  try {
    // Warm the workers (thread start, JIT) on a small prefix; its verdict does not matter.
    await verifyBundleParallel(chunks.slice(0, 1), { pool, requireSealed: false });
    // Noisy shared machine: three rounds, each figure measured in turn, best of each.
    const seq: number[] = [];
    const par: number[] = [];
    const raw: number[] = [];
    const ticks: [Map<string, number>, Map<string, number>][] = [];
    for (let round = 0; round < 3; round++) {
      let t0 = performance.now();
      const v = await verifyBundle(chunks);
      seq.push(rate(lines.length, performance.now() - t0));
      if (!v.ok) throw new Error(`bench bundle failed verification: ${v.code}`);
      const before = cpuTicks(pool.pids());
      t0 = performance.now();
      const p = await verifyBundleParallel(chunks, { pool });
      par.push(rate(lines.length, performance.now() - t0));
      ticks.push([before, cpuTicks(pool.pids())]);
      if (!p.ok || p.receiptRoot !== v.receiptRoot) throw new Error('parallel verification disagrees with the sequential verifier');
      raw.push(rawHashRate(lines, 1));
    }
    const hashAll = best(raw);

    // Peak memory: each verifier in a fresh process streaming the bundle from disk.
    const dir = mkdtempSync(join(tmpdir(), 'tally-bench-'));
    const file = join(dir, 'bundle.jsonl');
    writeFileSync(file, bundle);
    let seqChild: ChildRun;
    let parChild: ChildRun;
    try {
      seqChild = await childVerify(file, 'seq', pool.size);
      parChild = await childVerify(file, 'par', pool.size);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    if (!seqChild.ok || !parChild.ok) throw new Error('bench bundle failed verification in the child process');
    const fileMb = Math.round(bundle.length / 1048576);
    // The thread CPU of the round whose rate is reported (the best), so the bound speaks of that round.
    const [before, after] = ticks[par.indexOf(best(par))]!;
    const split = threadSplit(before, after, lines.length, pool.size, hashCpuUs(lines));
    return [
      { name: 'append unsigned turn (memory store)', perSecond: appendRate, baselineName: 'SHA-256 of the same turn bytes', baselinePerSecond: hashTurns, ratio: appendRate / hashTurns, note: 'aim: >= 50,000/s' },
      {
        name: 'verify bundle entries (verifyBundle, this thread)',
        perSecond: best(seq),
        baselineName: 'SHA-256 of the same entry bytes',
        baselinePerSecond: hashAll,
        ratio: best(seq) / hashAll,
        note: `best of 3; from a ${fileMb} MB file: ${rate(seqChild.size, seqChild.ms).toLocaleString('en-US')}/s, peak RSS ${mb(seqChild.maxRssKb)} (process at start ${mb(seqChild.rssBeforeKb)})`,
      },
      {
        name: `verify bundle entries (verifyBundleParallel, main thread + ${pool.size} ${pool.mode === 'processes' ? `child process${pool.size === 1 ? '' : 'es'}` : `worker thread${pool.size === 1 ? '' : 's'}`})`,
        perSecond: best(par),
        baselineName: 'SHA-256 of the same entry bytes',
        baselinePerSecond: hashAll,
        ratio: best(par) / hashAll,
        note: `aim: ratio >= 0.45 (issue 33); best of 3; from the file: ${rate(parChild.size, parChild.ms).toLocaleString('en-US')}/s incl. worker start, peak RSS ${mb(parChild.maxRssKb)} (process at start ${mb(parChild.rssBeforeKb)}) + ${parChild.childrenMaxRssKb.map(mb).join(' + ') || 'no'} in its child processes; ${split}`,
      },
    ];
  } finally {
    await pool.close();
  }
}
