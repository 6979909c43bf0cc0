/**
 * A bounded race of many clients on loopback: for every slot of several
 * sessions, identical retries, conflicting answers and duplicate frames are
 * sent at once, spread over one or more servers. Used by the load test (one
 * server on SQLite) and the multi-process test (two servers on PostgreSQL).
 */
import { expect } from 'vitest';
import { createClient, type TallyClient } from '../../src/client/index.js';
import { verifyBundle } from '../../src/codec/index.js';
import type { TurnResult } from '../../src/session/index.js';

/** What happened to one submission. */
interface Submitted {
  readonly session: number;
  readonly ordinal: number;
  readonly bytes: string;
  readonly result: TurnResult;
}

/** Figures of one race. */
export interface RaceReport {
  readonly requests: number;
  readonly turnsOk: number;
  readonly duplicates: number;
  readonly conflicts: number;
  /** Slots won by the bytes sent `same` times (the rest were won by one of the `conflicting` bodies). */
  readonly sameWins: number;
  /** The sessions raced. */
  readonly sessionIds: readonly string[];
  /** Client retries (network errors or 5xx); a healthy run has none. */
  readonly retries: number;
  readonly ms: number;
}

/**
 * Runs the race and checks exactly-once: per slot one winner, every ok answer
 * names the winner's entry, every loser is a turn-conflict, and the bundle of
 * each session verifies with every answered entry at its index.
 */
export async function raceAndCheck(urls: readonly string[], token: string, opts: { sessions: number; slots: number; same: number; conflicting: number; tag: string }): Promise<RaceReport> {
  const clients: TallyClient[] = [];
  let retries = 0;
  const perSlot = opts.same + opts.conflicting;
  for (let i = 0; i < Math.max(perSlot, 2) * urls.length; i++) clients.push(createClient({ url: urls[i % urls.length]!, token, retry: { retries: 3, baseMs: 20, maxMs: 200 }, onRetry: () => retries++ }));
  const client = (k: number) => clients[k % clients.length]!;
  const t0 = performance.now();
  let requests = 0;
  const submitted: Submitted[] = [];
  let sameWins = 0;

  const sids: string[] = [];
  for (let s = 0; s < opts.sessions; s++) {
    const o = await client(s).open({ name: `race-${opts.tag}-${s}` });
    if (!o.ok) throw new Error(o.message);
    sids.push(o.sessionId);
  }

  await Promise.all(
    sids.map(async (sid, s) => {
      for (let ord = -1; ord < opts.slots - 1; ord++) {
        // The same frame delivered twice at once (to different servers when there are several).
        const frames = await Promise.all([0, 1].map((k) => client(s + k).frame({ sessionId: sid, ordinal: ord, time: 1_000 + ord, data: { s, ord } })));
        requests += 2;
        const f = frames.find((x) => x.ok);
        if (!f || !f.ok) throw new Error(`frame ${ord} failed: ${JSON.stringify(frames)}`);
        expect(frames.filter((x) => x.ok && !x.duplicate).length).toBe(1);
        for (const x of frames) expect(x).toMatchObject({ ok: true, entryHash: f.entryHash });
        const bodies = [...Array.from({ length: opts.same }, () => `same s${s} o${ord}`), ...Array.from({ length: opts.conflicting }, (_, j) => `other ${j} s${s} o${ord}`)];
        const results = await Promise.all(
          bodies.map(async (text, k) => {
            const result = await client(s * perSlot + k).turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text } });
            requests++;
            submitted.push({ session: s, ordinal: ord, bytes: text, result });
            return { text, result };
          }),
        );
        const oks = results.filter((r) => r.result.ok);
        const winners = new Set(oks.map((r) => r.text));
        expect(winners.size).toBe(1);
        expect(oks.filter((r) => r.result.ok && !r.result.duplicate).length).toBe(1);
        expect(new Set(oks.map((r) => (r.result.ok ? r.result.entryHash : ''))).size).toBe(1);
        for (const r of results) if (!r.result.ok) expect(r.result.diagnostic).toBe('turn-conflict');
        // Every submission of the winning bytes was answered ok (identical retries never conflict).
        const win = [...winners][0]!;
        for (const r of results) if (r.text === win) expect(r.result.ok).toBe(true);
        // Which body wins is the scheduler's choice; what follows from it is exact.
        if (win.startsWith('same ')) sameWins++;
      }
    }),
  );

  // Nothing lost: every answered entry is in the verified bundle at its index.
  for (let s = 0; s < sids.length; s++) {
    const chunks: Uint8Array[] = [];
    for await (const c of client(s + 1).bundle(sids[s]!)) chunks.push(c);
    const v = await verifyBundle(chunks, { requireSealed: false });
    expect(v).toMatchObject({ ok: true, size: 1 + 2 * opts.slots, turns: opts.slots, frames: opts.slots });
    const lines = new TextDecoder().decode(Buffer.concat(chunks)).trimEnd().split('\n');
    const events = await client(s).events(sids[s]!, { limit: 10_000 });
    if (!events.ok) throw new Error(events.message);
    for (const sub of submitted.filter((x) => x.session === s && x.result.ok)) {
      const r = sub.result as Extract<TurnResult, { ok: true }>;
      expect(events.events[r.index]!.hash).toBe(r.entryHash);
      expect(lines[r.index]).toContain(Buffer.from(sub.bytes).toString('base64'));
    }
  }
  const oks = submitted.filter((x) => x.result.ok);
  return {
    requests,
    turnsOk: oks.length,
    duplicates: oks.filter((x) => x.result.ok && x.result.duplicate).length,
    conflicts: submitted.length - oks.length,
    sameWins,
    retries,
    sessionIds: sids,
    ms: Math.round(performance.now() - t0),
  };
}
