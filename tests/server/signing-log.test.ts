/**
 * `tally serve` signs only through its store's signing log: the checkpoint
 * and turn-receipt GETs and the seal receipt each leave a record in the
 * database (read here straight from the SQLite file) before the signature
 * goes out, and every served checkpoint is one the log holds.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEngineKeyFile, openSessionCheckpoint, parseTlogProof } from '../../src/receipt/index.js';
import { TOKENS, cleanup, get, ok, rpc, startServer, tempDir, type ServerProc } from './helpers.js';

const RT = TOKENS.runtime;
let srv: ServerProc;
let keyFile: string;
let db: string;

beforeAll(async () => {
  const dir = tempDir('signing-log');
  keyFile = join(dir, 'engine.key');
  db = join(dir, 'tally.db');
  srv = await startServer({ dir, db, args: ['--key', keyFile, '--engine-name', 'wire.test'] });
});
afterAll(async () => {
  expect(await srv.stop()).toBe(0);
  cleanup();
});

describe('serve signs through the signing log', () => {
  it('GET checkpoint, GET turn-receipt and the seal are each recorded in the store before they are served', async () => {
    const verifier = (await loadEngineKeyFile(keyFile)).verifierKey;
    const sid = ok<{ sessionId: string }>(await rpc(srv.url, RT, 'session/open', { spec: { name: 'logged-wire-day' } })).sessionId;
    for (let ord = -1; ord < 1; ord++) {
      const f = ok<{ entryHash: string; frameRoot: string }>(await rpc(srv.url, RT, 'session/frame', { sessionId: sid, ordinal: ord, time: 10 + ord }));
      ok(await rpc(srv.url, RT, 'session/turn', { sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: `t${ord}` } }));
    }
    const served: string[] = [];
    served.push((await get(srv.url, RT, `/sessions/${sid}/checkpoint?size=3`)).text);
    const tr = parseTlogProof((await get(srv.url, RT, `/sessions/${sid}/turn-receipt?index=1`)).text);
    if (!tr.ok) throw new Error(tr.message);
    served.push(tr.tlogProof.signedCheckpoint);
    served.push(ok<{ signedCheckpoint: string }>(await rpc(srv.url, RT, 'session/finalize', { sessionId: sid })).signedCheckpoint);
    const raw = new Database(db, { readonly: true });
    const rows = raw.prepare('SELECT origin, size, root FROM signed_checkpoints WHERE origin = ? ORDER BY size').all(`wire.test/${sid}`) as { size: number; root: string }[];
    raw.close();
    expect(rows.map((r) => r.size)).toEqual([3, 5, 6]);
    for (const text of served) {
      const cp = openSessionCheckpoint(text, [verifier], { sessionId: sid });
      if (!cp.ok) throw new Error(cp.message);
      expect(rows).toContainEqual(expect.objectContaining({ size: cp.checkpoint.size, root: cp.checkpoint.root }));
    }
  });
});
