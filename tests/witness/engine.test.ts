/**
 * The engine asks witnesses: a witnessed notary over real witness HTTP
 * servers (loopback, port 0). Cosignatures on checkpoints, seals and turn
 * receipts; sizes learned from 409; a down or slow witness never blocks an
 * append or a seal; re-asking later collects the missing cosignature.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createNotary, generateEngineKey, sessionCheckpointText, signNote } from '../../src/receipt/index.js';
import {
  cosignerKeyFrom,
  createWitness,
  createWitnessedNotary,
  createWitnessHttpServer,
  MemoryWitnessStore,
  quorumPolicy,
  verifyWitnessedTurnReceipt,
  checkWitnessPolicy,
  type Witness,
} from '../../src/witness/index.js';
import { runDay } from '../helpers/day.js';

const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

async function listen(s: Server, port = 0): Promise<string> {
  servers.push(s);
  await new Promise<void>((r) => s.listen(port, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const engineKey = generateEngineKey('tally.example/desk');
const keys = ['w1.example', 'w2.example', 'w3.example'].map((n) => cosignerKeyFrom(generateEngineKey(n)));

async function witness(i: number): Promise<Witness> {
  const w = createWitness({ key: keys[i]!, store: new MemoryWitnessStore() });
  await w.trustLogKey(engineKey.verifierKey);
  return w;
}

describe('createWitnessedNotary', () => {
  it('cosigns checkpoints and the seal; a down witness is recorded, re-asking later adds it; receipts carry the quorum', async () => {
    const [w1, w2, w3] = [await witness(0), await witness(1), await witness(2)];
    const u1 = await listen(createWitnessHttpServer(w1));
    const u2 = await listen(createWitnessHttpServer(w2));
    const port3 = await freePort(); // w3 is down for now
    const u3 = `http://127.0.0.1:${port3}`;
    const policy = quorumPolicy(keys.map((k) => k.verifierKey), 3);
    if (!policy.ok) throw new Error(policy.message);
    const notary = createWitnessedNotary({
      notary: createNotary({ key: engineKey }),
      witnesses: [u1, u2, u3].map((url, i) => ({ url, verifier: keys[i]!.verifier })),
      policy: policy.policy,
      timeoutMs: 2000,
    });
    const { engine, sid } = await runDay({ finalize: false });
    const mid = await notary.issueCheckpoint(engine, sid, 3);
    expect(mid.ok).toBe(true);
    if (!mid.ok) return;
    expect(notary.report(mid.origin, 3)).toMatchObject({ cosignedBy: ['w1.example', 'w2.example'], quorum: false, outcomes: [{ status: 'cosigned' }, { status: 'cosigned' }, { status: 'unreachable' }] });
    const sealed = await notary.sealWithReceipt(engine, sid);
    expect(sealed.ok).toBe(true);
    if (!sealed.ok) return;
    expect(sealed.witnesses.cosignedBy).toEqual(['w1.example', 'w2.example']);
    expect(checkWitnessPolicy(sealed.signedCheckpoint, [engineKey], policy.policy)).toMatchObject({ ok: false, code: 'below-quorum', missing: ['w3.example'] });
    // w3 comes up; re-asking collects its cosignature for the same sealed checkpoint.
    await listen(createWitnessHttpServer(w3), port3);
    const again = await notary.cosign(engine, sealed.checkpoint);
    expect(again.cosignedBy).toEqual(['w1.example', 'w2.example', 'w3.example']);
    expect(again.quorum).toBe(true);
    // A turn receipt served afterwards carries all three cosignatures.
    const receipt = await notary.turnReceipt(engine, sid, 2);
    expect(receipt.ok).toBe(true);
    if (receipt.ok) expect(verifyWitnessedTurnReceipt(receipt.text, { verifiers: [engineKey], policy: policy.policy })).toMatchObject({ ok: true });
  });

  it('learns the size a witness holds from its 409 (a restarted engine)', async () => {
    const w = await witness(0);
    const url = await listen(createWitnessHttpServer(w));
    const { engine, sid } = await runDay({ finalize: false });
    const opts = { witnesses: [{ url, verifier: keys[0]!.verifier }] };
    const first = createWitnessedNotary({ notary: createNotary({ key: engineKey }), ...opts });
    const a = await first.issueCheckpoint(engine, sid, 4);
    expect(a.ok && first.report(a.origin, 4)?.cosignedBy).toEqual(['w1.example']);
    const restarted = createWitnessedNotary({ notary: createNotary({ key: engineKey }), ...opts });
    const b = await restarted.issueCheckpoint(engine, sid);
    expect(b.ok).toBe(true);
    if (b.ok) expect(restarted.report(b.origin, b.size)).toMatchObject({ cosignedBy: ['w1.example'], outcomes: [{ status: 'cosigned' }] });
    // An older checkpoint than the witness holds cannot be cosigned: recorded as a conflict.
    const older = await restarted.issueCheckpoint(engine, sid, 2);
    expect(older.ok && restarted.report(older.origin, 2)?.outcomes).toEqual([{ witness: 'w1.example', status: 'conflict', message: expect.stringContaining('holds size') }]);
  });

  it('a witness that never answers does not block appends, and costs a seal at most the timeout', async () => {
    const hang = createServer(() => {}); // accepts, never answers
    const url = await listen(hang);
    const notary = createWitnessedNotary({ notary: createNotary({ key: engineKey }), witnesses: [{ url, verifier: keys[0]!.verifier }], timeoutMs: 300 });
    const { engine, sid } = await runDay({ finalize: false, wakes: 2 });
    const pending = notary.issueCheckpoint(engine, sid);
    let settled = false;
    void pending.then(() => (settled = true));
    // An append while the witness hangs: it completes before the checkpoint does.
    const f = await engine.frame({ sessionId: sid, ordinal: 2, time: 999_999, data: { price: '1' } });
    expect(f.ok).toBe(true);
    expect(settled).toBe(false);
    const r = await pending;
    expect(r.ok && notary.report(r.origin, r.size)?.outcomes).toEqual([{ witness: 'w1.example', status: 'unreachable', message: expect.any(String) }]);
  });

  it('submits only checkpoints the signing log recorded: a checkpoint signed around the log reaches no witness', async () => {
    const store = new MemoryWitnessStore();
    const w = createWitness({ key: keys[0]!, store });
    await w.trustLogKey(engineKey.verifierKey);
    const url = await listen(createWitnessHttpServer(w));
    const notary = createWitnessedNotary({ notary: createNotary({ key: engineKey }), witnesses: [{ url, verifier: keys[0]!.verifier }] });
    const { engine, sid } = await runDay({ finalize: false });
    const origin = `${engineKey.name}/${sid}`;
    // Signed with the engine key but never recorded (a second root for size 3, and an honest size never issued).
    const forged = new Uint8Array(32).fill(0xaa);
    const text = sessionCheckpointText(engineKey.name, sid, 3, forged);
    const bypass = { sessionId: sid, origin, size: 3, root: Buffer.from(forged).toString('hex'), signedCheckpoint: signNote(text, [engineKey]) };
    await expect(notary.cosign(engine, bypass)).rejects.toMatchObject({ code: 'TALLY_WITNESS_NOT_LOGGED' });
    expect(await store.latest(origin)).toBeUndefined();
    // Once the log records size 3, the same size with the forged root is still refused (the log holds another root).
    const honest = await notary.issueCheckpoint(engine, sid, 3);
    expect(honest.ok).toBe(true);
    await expect(notary.cosign(engine, bypass)).rejects.toMatchObject({ code: 'TALLY_WITNESS_NOT_LOGGED', details: expect.stringContaining('the log holds root') });
    // A recorded checkpoint whose text was swapped for another size's is refused too.
    if (honest.ok) await expect(notary.cosign(engine, { ...honest, signedCheckpoint: signNote(sessionCheckpointText(engineKey.name, sid, 2, forged), [engineKey]) })).rejects.toMatchObject({ code: 'TALLY_WITNESS_NOT_LOGGED' });
    expect((await store.latest(origin))?.size).toBe(3);
  });
});
