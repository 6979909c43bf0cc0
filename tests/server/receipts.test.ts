/**
 * The grader GETs behind an engine key: the signed checkpoint returned by
 * finalize and served later, single-turn receipts and consistency proofs,
 * each verified with the verifier key derived from the key file (not the
 * server's word for it).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromHex } from '../../src/protocol/index.js';
import { loadEngineKeyFile, openSessionCheckpoint, parseConsistencyProof, verifyCheckpointConsistency, verifyTurnReceipt } from '../../src/receipt/index.js';
import { TOKENS, cleanup, get, newEngineKey, ok, rpc, startServer, tempDir, type ServerProc } from './helpers.js';

const RT = TOKENS.runtime;
let srv: ServerProc;
let keyFile: string;

beforeAll(async () => {
  const dir = tempDir('receipts');
  keyFile = join(dir, 'engine.key');
  newEngineKey(keyFile, 'wire.test');
  srv = await startServer({ dir, db: 'memory:', args: ['--key', keyFile, '--engine-name', 'wire.test'] });
});
afterAll(async () => {
  expect(await srv.stop()).toBe(0);
  cleanup();
});

describe('signed receipts over the wire', () => {
  it('finalize returns a checkpoint signed by the engine key; checkpoint, turn-receipt and consistency GETs verify with the pinned key', async () => {
    const verifier = (await loadEngineKeyFile(keyFile)).verifierKey;
    expect(verifier).toMatch(/^wire\.test\+[0-9a-f]{8}\+/);
    expect((await get(srv.url, RT, '/verifier-key')).text.trim()).toBe(verifier);

    const sid = ok<{ sessionId: string }>(await rpc(srv.url, RT, 'session/open', { spec: { name: 'signed-day' } })).sessionId;
    for (let ord = -1; ord < 2; ord++) {
      const f = ok<{ entryHash: string; frameRoot: string }>(await rpc(srv.url, RT, 'session/frame', { sessionId: sid, ordinal: ord, time: 10 + ord }));
      ok(await rpc(srv.url, RT, 'session/turn', { sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: `t${ord}` } }));
    }
    // A checkpoint of the unsealed session, kept to prove consistency later.
    const early = await get(srv.url, RT, `/sessions/${sid}/checkpoint`);
    expect(early.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const earlyCp = openSessionCheckpoint(early.text, [verifier], { sessionId: sid });
    expect(earlyCp).toMatchObject({ ok: true, checkpoint: { size: 7 } });

    const fin = ok<{ receipt: { size: number; receiptRoot: string }; signedCheckpoint: string; duplicate: boolean }>(await rpc(srv.url, RT, 'session/finalize', { sessionId: sid }));
    const opened = openSessionCheckpoint(fin.signedCheckpoint, [verifier], { sessionId: sid });
    expect(opened).toMatchObject({ ok: true, checkpoint: { size: fin.receipt.size, root: fin.receipt.receiptRoot } });
    // The retry returns the same signed bytes (Ed25519 is deterministic).
    const again = ok<typeof fin>(await rpc(srv.url, RT, 'session/finalize', { sessionId: sid }));
    expect(again).toEqual({ ...fin, duplicate: true });
    // The receipt GET carries it too.
    const receipt = JSON.parse((await get(srv.url, RT, `/sessions/${sid}/receipt`)).text) as Record<string, unknown>;
    expect(receipt).toMatchObject({ ...fin.receipt, signedCheckpoint: fin.signedCheckpoint, verifierKey: verifier });
    // A checkpoint of an earlier size.
    const cp3 = openSessionCheckpoint((await get(srv.url, RT, `/sessions/${sid}/checkpoint?size=3`)).text, [verifier], { sessionId: sid });
    const proof3 = JSON.parse((await get(srv.url, RT, `/sessions/${sid}/proof?index=0&size=3`)).text) as { root: string };
    expect(cp3).toMatchObject({ ok: true, checkpoint: { size: 3, root: proof3.root } });

    // A single-turn receipt: the entry's bytes, its proof, and the signed checkpoint.
    const tr = await get(srv.url, RT, `/sessions/${sid}/turn-receipt?index=4`);
    const v = verifyTurnReceipt(tr.text, { verifiers: [verifier], pin: { sessionId: sid, size: fin.receipt.size, receiptRoot: fin.receipt.receiptRoot } });
    expect(v).toMatchObject({ ok: true, index: 4, entry: { kind: 'turn', ordinal: 0 } });
    // One flipped proof byte breaks it.
    const lines = tr.text.split('\n');
    const hashLine = lines.findIndex((l, i) => i > 0 && /^[A-Za-z0-9+/]{43}=$/.test(l));
    lines[hashLine] = (lines[hashLine]!.startsWith('A') ? 'B' : 'A') + lines[hashLine]!.slice(1);
    expect(verifyTurnReceipt(lines.join('\n'), { verifiers: [verifier] }).ok).toBe(false);
    // A pin on another root fails.
    expect(verifyTurnReceipt(tr.text, { verifiers: [verifier], pin: { receiptRoot: 'ab'.repeat(32) } }).ok).toBe(false);

    // Consistency from the early checkpoint to the sealed tree.
    const cons = await get(srv.url, RT, `/sessions/${sid}/consistency?from=7`);
    const parsed = parseConsistencyProof(cons.text);
    if (!parsed.ok) throw new Error(parsed.message);
    expect(verifyCheckpointConsistency(early.text, parsed.consistencyProof.signedCheckpoint, parsed.consistencyProof.proof, { verifiers: [verifier] })).toMatchObject({ ok: true });

    // Out of range and unknown.
    expect((await get(srv.url, RT, `/sessions/${sid}/checkpoint?size=99`)).status).toBe(404);
    expect((await get(srv.url, RT, `/sessions/${sid}/turn-receipt?index=8`)).status).toBe(404);
    expect((await get(srv.url, RT, `/sessions/${sid}/turn-receipt`)).status).toBe(422);
    expect(JSON.parse((await get(srv.url, RT, `/sessions/${'ab'.repeat(32)}/checkpoint`)).text).error.type).toBe('wrong-session');
    expect(fromHex(fin.receipt.receiptRoot).length).toBe(32);
  });

  it('agent tokens get signed reads of their sessions only', async () => {
    const sid = ok<{ sessionId: string }>(await rpc(srv.url, RT, 'session/open', { spec: { name: 'plain-signed' } })).sessionId;
    expect((await get(srv.url, TOKENS.alpha, `/sessions/${sid}/checkpoint`)).status).toBe(403);
    expect((await get(srv.url, TOKENS.auditor, `/sessions/${sid}/checkpoint`)).status).toBe(200);
  });
});
