/**
 * Real engine requests for the store benchmarks: days recorded once through
 * the engine on a memory store, then replayed into the store under test
 * (each day in order, days concurrently).
 */
import { createEngine } from '../session/index.js';
import { MemoryStore } from '../store/memory.js';
import type { AppendOutcome, AppendRequest, SessionHead, StoredEntry, TranscriptStore } from '../store/types.js';

/** One recorded day: its genesis, first head and every append request, in order. */
export interface Recorded {
  readonly genesis: StoredEntry;
  readonly head: SessionHead;
  readonly appends: AppendRequest[];
}

/** A memory store that keeps every request the engine made, to replay them elsewhere. */
class Recorder extends MemoryStore {
  readonly days = new Map<string, Recorded>();
  override async createSession(genesis: StoredEntry, head: SessionHead): Promise<'created' | 'exists'> {
    const r = await super.createSession(genesis, head);
    if (r === 'created') this.days.set(head.sessionId, { genesis, head, appends: [] });
    return r;
  }
  override async append(request: AppendRequest): Promise<AppendOutcome> {
    const r = await super.append(request);
    if (r.ok) this.days.get(request.sessionId)!.appends.push(request);
    return r;
  }
}

/** Real engine requests: `count` days of at least `appends` appends each (frames and authored turns). */
export async function record(tag: string, count: number, appends: number): Promise<Recorded[]> {
  const rec = new Recorder();
  const engine = createEngine({ store: rec });
  const enc = new TextEncoder();
  const out: Recorded[] = [];
  for (let d = 0; d < count; d++) {
    const open = await engine.open({ name: `bench-${tag}-${d}`, day: '2026-11-30', nonce: `${process.pid}-${Date.now()}` });
    if (!open.ok) throw new Error(open.message);
    const sid = open.sessionId;
    for (let ord = -1; rec.days.get(sid)!.appends.length < appends; ord++) {
      const f = await engine.frame({ sessionId: sid, ordinal: ord, time: 1_000 + (ord + 1) * 1_000, data: { price: `${100 + (ord % 7)}.25` } });
      if (!f.ok) throw new Error(f.message);
      const t = await engine.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`{"action":"hold","ord":${ord}}`) } });
      if (!t.ok) throw new Error(t.message);
    }
    const day = rec.days.get(sid)!;
    out.push({ ...day, appends: day.appends.slice(0, appends) });
  }
  return out;
}

/** Replays every day's appends into `store`, days concurrently, each day in order; returns seconds taken by the appends. */
export async function replay(store: TranscriptStore, days: readonly Recorded[]): Promise<{ appends: number; seconds: number }> {
  for (const d of days) await store.createSession(d.genesis, d.head);
  const t0 = performance.now();
  await Promise.all(
    days.map(async (d) => {
      for (const a of d.appends) {
        const o = await store.append(a);
        if (!o.ok) throw new Error(`bench append refused: ${o.reason}`);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return { appends: days.reduce((n, d) => n + d.appends.length, 0), seconds };
}
