/**
 * The witnessed notary's guard, in process: a root it learned from a witness's
 * cosignature is checked against the store before anything is signed. The
 * same notary pointed at a store holding other bytes at the cosigned size
 * (a failover inside one process's life) refuses before signing: the store's
 * signing log stays empty, the conflict is reported once per answer to the
 * listener and counted by reason (real OpenTelemetry SDK).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { createNotary, generateEngineKey } from '../../src/receipt/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { cosignerKeyFrom, createWitness, createWitnessedNotary, createWitnessHttpServer, MemoryWitnessStore, WITNESS_CONFLICT_CODE, type WitnessConflict } from '../../src/witness/index.js';
import { enc } from '../helpers/day.js';
import { installSdk } from '../telemetry/helpers.js';

const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

/** A session with a fixed genesis (so one id) whose frames after the open carry `tag`. */
async function day(store: MemoryStore, tag: string): Promise<string> {
  const engine = createEngine({ store });
  const open = await engine.open({ name: 'guard-day', day: '2026-11-30' });
  if (!open.ok) throw new Error(open.message);
  for (let ord = -1; ord < 3; ord++) {
    const f = await engine.frame({ sessionId: open.sessionId, ordinal: ord, time: 1_000 + (ord + 1) * 60_000, data: { price: ord < 0 ? '1' : `${tag}${ord}` } });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: open.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`${tag} ${ord}`) } });
    if (!t.ok) throw new Error(t.message);
  }
  return open.sessionId;
}

it('refuses to sign a store whose root at a cosigned size is not the one the witness cosigned, before signing', async () => {
  const sdk = installSdk();
  try {
    const engineKey = generateEngineKey('tally.example/desk');
    const wkey = cosignerKeyFrom(generateEngineKey('w1.example'));
    const w = createWitness({ key: wkey, store: new MemoryWitnessStore() });
    await w.trustLogKey(engineKey.verifierKey);
    const s = createWitnessHttpServer(w);
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    const seen: WitnessConflict[] = [];
    const notary = createWitnessedNotary({ notary: createNotary({ key: engineKey }), witnesses: [{ url, verifier: wkey.verifier }], onConflict: (c) => seen.push(c) });

    const a = new MemoryStore();
    const sid = await day(a, 'a');
    const cp = await notary.issueCheckpoint(createEngine({ store: a }), sid);
    if (!cp.ok) throw new Error(cp.message);
    expect(notary.report(cp.origin, cp.size)?.cosignedBy).toEqual(['w1.example']);
    expect(notary.conflicts()).toEqual([]);
    // A store holding the same history is signed as before (the guard is no false alarm).
    const copy = new MemoryStore();
    expect(await day(copy, 'a')).toBe(sid);
    expect((await notary.issueCheckpoint(createEngine({ store: copy }), sid)).ok).toBe(true);

    // The same session id, the same size, other bytes: refused before anything is signed.
    const b = new MemoryStore();
    expect(await day(b, 'b')).toBe(sid);
    await expect(notary.issueCheckpoint(createEngine({ store: b }), sid, 3)).rejects.toMatchObject({ code: WITNESS_CONFLICT_CODE });
    expect(await b.signedCheckpoints(cp.origin)).toEqual([]);
    expect(seen).toEqual([expect.objectContaining({ witness: 'w1.example', origin: cp.origin, reason: 'root-mismatch', witnessSize: cp.size, storeSize: cp.size })]);
    expect(notary.conflicts()).toEqual(seen);
    expect(await sdk.sum('tally.witness.conflicts', { reason: 'root-mismatch' })).toBe(1);
    // And stays refused, without asking again or counting again.
    await expect(notary.issueCheckpoint(createEngine({ store: b }), sid)).rejects.toMatchObject({ code: WITNESS_CONFLICT_CODE });
    expect(await b.signedCheckpoints(cp.origin)).toEqual([]);
    expect(seen).toHaveLength(1);
  } finally {
    await sdk.shutdown();
  }
});
