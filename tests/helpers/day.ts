import { createEngine, type Engine } from '../../src/session/index.js';
import { encodeBundle } from '../../src/codec/index.js';

export const enc = new TextEncoder();

/** Runs a small deterministic day and returns the engine, session id and bundle bytes. */
export async function runDay(opts: { wakes?: number; engine?: Engine; name?: string; finalize?: boolean } = {}) {
  const engine = opts.engine ?? createEngine();
  const open = await engine.open({ name: opts.name ?? 'test-day', day: '2026-11-30' });
  if (!open.ok) throw new Error(open.message);
  const sid = open.sessionId;
  const wakes = opts.wakes ?? 3;
  for (let ord = -1; ord < wakes; ord++) {
    const f = await engine.frame({ sessionId: sid, ordinal: ord, time: 1_000 + (ord + 1) * 60_000, data: { price: String(100 + ord) } });
    if (!f.ok) throw new Error(f.message);
    const body = ord % 3 === 2 ? ({ kind: 'stand-down', failureClass: 'timeout' } as const) : ({ kind: 'authored', bytes: enc.encode(`answer ${ord}`) } as const);
    const t = await engine.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body });
    if (!t.ok) throw new Error(t.message);
  }
  let receipt;
  if (opts.finalize ?? true) {
    const fin = await engine.finalize(sid, { note: 'done' });
    if (!fin.ok) throw new Error(fin.message);
    receipt = fin.receipt;
  }
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) lines.push(l);
  return { engine, sid, receipt, bundle: encodeBundle(lines), lines };
}
