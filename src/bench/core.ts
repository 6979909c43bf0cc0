/**
 * Core benchmarks (issue: the core): appends per second of unsigned turns on
 * the memory store, and entries per second verified from a bundle, each
 * beside the raw SHA-256 rate over the same bytes measured in the same run.
 */
import { encodeBundle, sha256, verifyBundle } from '../codec/index.js';
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

/** SHA-256 over each buffer (what a verifier must do at least once per entry). */
function rawHashRate(lines: readonly Uint8Array[], rounds: number): number {
  const t0 = performance.now();
  let n = 0;
  for (let r = 0; r < rounds; r++) for (const l of lines) {
    sha256(l);
    n++;
  }
  return rate(n, performance.now() - t0);
}

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
  const t0 = performance.now();
  const v = await verifyBundle(chunks);
  const verifyMs = performance.now() - t0;
  if (!v.ok) throw new Error(`bench bundle failed verification: ${v.code}`);
  const verifyRate = rate(lines.length, verifyMs);
  const hashAll = rawHashRate(lines, 3);
  return [
    { name: 'append unsigned turn (memory store)', perSecond: appendRate, baselineName: 'SHA-256 of the same turn bytes', baselinePerSecond: hashTurns, ratio: appendRate / hashTurns, note: 'aim: >= 50,000/s' },
    { name: 'verify bundle entries', perSecond: verifyRate, baselineName: 'SHA-256 of the same entry bytes', baselinePerSecond: hashAll, ratio: verifyRate / hashAll, note: 'aim: ratio >= 0.25' },
  ];
}
