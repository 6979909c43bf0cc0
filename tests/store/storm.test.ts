/**
 * Replay storm across OS processes: 4 engine processes on ONE SQLite file,
 * and 4 on ONE PostgreSQL database, run the same days at the same moment —
 * identical turns, conflicting turns for the same slots, and a nonce claimed
 * in every session, in lockstep so that every slot is contested at the same
 * moment. Exactly one admission per slot and per nonce; every
 * other call gets its typed answer; every exported chain verifies.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBundle, sha256, verifyBundle } from '../../src/codec/index.js';
import { toHex, type TurnEntry } from '../../src/protocol/index.js';
import type { NonceOwner } from '../../src/store/index.js';
import { createEngine } from '../../src/session/index.js';
import { openStore, type TranscriptStore } from '../../src/store/index.js';
import { PG_URL, dropSchema, freshSchemaName, pgReady, warnIfSkipped } from './helpers/pg.js';
import { requireFreshDist, startWorker } from './helpers/procs.js';
import { removeTempDirs, tempDir } from './helpers/tmp.js';

warnIfSkipped('storm.test.ts');
beforeAll(requireFreshDist);
afterAll(removeTempDirs);

const WORKERS = 4;
const SESSIONS = 3;
const WAKES = 8; // ordinals -1..7

interface Line {
  w?: number;
  verb?: 'open' | 'frame' | 'turn' | 'finalize';
  si: number;
  ord: number;
  ok: boolean;
  created?: boolean;
  duplicate?: boolean;
  diagnostic?: string;
  ruling?: { admitted: boolean; code?: string };
  nonce?: string;
  sid?: string;
}

async function storm(location: string, run: string, postgres?: Record<string, unknown>): Promise<void> {
  const workers = Array.from({ length: WORKERS }, (_, worker) => startWorker('storm.mjs', { location, worker, run, sessions: SESSIONS, wakes: WAKES, postgres }));
  await Promise.all(workers.map((w) => w.until((l) => l.some((x) => x.includes('"ready"')))));
  // Lockstep: every process gets each step at the same moment, so every slot is contested.
  const step = async (name: string): Promise<void> => {
    for (const w of workers) w.child.stdin.write(`${name}\n`);
    await Promise.all(workers.map((w) => w.until((l) => l.some((x) => x === JSON.stringify({ stepDone: name })))));
  };
  await step('open');
  for (let ord = -1; ord < WAKES; ord++) await step(`slot ${ord}`);
  await step('finalize');
  const exits = await Promise.all(workers.map((w) => w.exited));
  for (const e of exits) expect(e, e.stderr).toMatchObject({ code: 0 });
  const lines: Line[] = workers.flatMap((w) => w.lines.map((l) => JSON.parse(l) as Line)).filter((l) => l.verb !== undefined);
  if (postgres?.['groupCommit']) {
    // Each process sent its sessions' appends in shared statements.
    const stats = workers.flatMap((w) => w.lines.map((l) => JSON.parse(l) as { groupCommit?: { batches: number } })).filter((l) => l.groupCommit);
    expect(stats).toHaveLength(WORKERS);
    expect(stats.reduce((n, l) => n + l.groupCommit!.batches, 0)).toBeGreaterThan(WORKERS);
  }
  const of = (verb: Line['verb'], si: number, ord?: number): Line[] => lines.filter((l) => l.verb === verb && l.si === si && (ord === undefined || l.ord === ord));

  const store: TranscriptStore = await openStore(location);
  try {
    const engine = createEngine({ store });
    const admittedByNonce = new Map<string, number>();
    // Where each admission is recorded: the nonce's owner must name exactly this session, index and hash.
    const admittedAt = new Map<string, NonceOwner>();
    for (let si = 0; si < SESSIONS; si++) {
      // One process created each day; the others found it.
      expect(of('open', si).map((l) => l.created).sort()).toEqual([false, false, false, true]);
      for (let ord = -1; ord < WAKES; ord++) {
        const frames = of('frame', si, ord);
        expect(frames.every((f) => f.ok)).toBe(true);
        expect(frames.filter((f) => !f.duplicate)).toHaveLength(1);
        const turns = of('turn', si, ord);
        const fresh = turns.filter((t) => t.ok && !t.duplicate);
        expect(fresh, `session ${si} slot ${ord}`).toHaveLength(1);
        const others = turns.filter((t) => t !== fresh[0]);
        if ((ord + 1) % 3 === 1) {
          // Conflicting turns: the losers are told so, nothing is written for them.
          for (const t of others) expect(t).toMatchObject({ ok: false, diagnostic: 'turn-conflict' });
        } else {
          // Identical turns: the losers get the settled result, ruling included.
          for (const t of others) expect(t).toMatchObject({ ok: true, duplicate: true, ruling: fresh[0]!.ruling });
        }
      }
      const fins = of('finalize', si);
      expect(fins.map((f) => f.ok && f.duplicate).sort()).toEqual([false, true, true, true]);
      // The exported chain verifies; count admissions per nonce from the record itself.
      const sid = fins[0]!.sid!;
      const bytes: Uint8Array[] = [];
      for await (const b of engine.exportEntries(sid)) bytes.push(b);
      const v = await verifyBundle([encodeBundle(bytes)], {
        onEntry: (e) => {
          if (e.entry.kind !== 'turn') return;
          const t = e.entry as TurnEntry;
          if (t.body.kind !== 'authored') return;
          const { agent, nonce } = JSON.parse(Buffer.from(t.body.bytes, 'base64').toString('utf8')) as { agent: string; nonce: string };
          const k = `${agent}/${nonce}`;
          const r = t.ruling as { admitted: boolean; code?: string };
          if (r.admitted) {
            admittedByNonce.set(k, (admittedByNonce.get(k) ?? 0) + 1);
            admittedAt.set(k, { sessionId: sid, index: e.index, intentHash: toHex(sha256(Buffer.from(t.body.bytes, 'base64'))) });
          }
          else expect(r).toEqual({ admitted: false, code: 'replayed_nonce' });
        },
      });
      expect(v.ok && v.size).toBe(2 + 2 * (WAKES + 1));
    }
    // Every nonce claimed anywhere was admitted exactly once across all sessions and processes.
    const claimed = new Set(lines.filter((l) => l.verb === 'turn').map((l) => l.nonce!));
    for (const k of claimed) {
      const admitted = admittedByNonce.get(k) ?? 0;
      const [agent, nonce] = k.split('/') as [string, string];
      // A conflicting turn that lost its slot never reached the record; everything else did, once.
      if (agent === 'agent-own' && admitted === 0) {
        expect(await store.nonceOwner(agent, nonce)).toBeUndefined();
        continue;
      }
      expect(admitted, k).toBe(1);
      expect(await store.nonceOwner(agent, nonce), k).toEqual(admittedAt.get(k));
    }
    // The processes really interleaved: slots were won by more than one of them.
    const winners = new Set(lines.filter((l) => l.verb === 'turn' && l.ok && !l.duplicate).map((l) => l.w));
    expect(winners.size).toBeGreaterThan(1);
    // The shared nonces really were contested: each went to one session and was a replay in the others.
    for (let ord = -1; ord < WAKES; ord++) {
      if ((ord + 1) % 3 !== 2) continue;
      const rulings = Array.from({ length: SESSIONS }, (_, si) => of('turn', si, ord).find((t) => t.ok && !t.duplicate)!.ruling!);
      expect(rulings.filter((r) => r.admitted)).toHaveLength(1);
    }
  } finally {
    await store.close();
  }
}

describe('replay storm across 4 OS processes', () => {
  it('SQLite (one file): one admission per slot and per nonce; typed answers for every other call; chains verify', async () => {
    await storm(join(tempDir('storm'), 'storm.db'), `sqlite-${process.pid}`);
  });

  it.skipIf(!pgReady)('PostgreSQL (one database): one admission per slot and per nonce; typed answers for every other call; chains verify', async () => {
    const schema = freshSchemaName('storm');
    const u = new URL(PG_URL!);
    u.searchParams.set('schema', schema);
    try {
      await storm(u.toString(), `pg-${process.pid}`);
    } finally {
      await dropSchema(schema);
    }
  });

  it.skipIf(!pgReady)('PostgreSQL with group commit forced (one statement at a time per process, so each process batches its sessions): the same guarantees', async () => {
    const schema = freshSchemaName('stormgc');
    const u = new URL(PG_URL!);
    u.searchParams.set('schema', schema);
    try {
      await storm(u.toString(), `pggc-${process.pid}`, { groupCommit: { maxBatch: SESSIONS, maxInFlight: 1 } });
    } finally {
      await dropSchema(schema);
    }
  });
});
