/**
 * `tally serve` signs only through its store's signing log: the checkpoint
 * and turn-receipt GETs and the seal receipt each leave a record in the
 * database (read here straight from the SQLite file) before the signature
 * goes out, and every served checkpoint is one the log holds.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { entryHash, toHex } from '../../src/protocol/index.js';
import { createNotary, loadEngineKeyFile, openSessionCheckpoint, parseTlogProof } from '../../src/receipt/index.js';
import { SqliteStore } from '../../src/store/index.js';
import { entriesOf, intentDay, linesOf, reseal } from '../receipt/fixtures.js';
import { TOKENS, cleanup, get, newEngineKey, ok, rpc, startServer, tempDir, type ServerProc } from './helpers.js';

const RT = TOKENS.runtime;
let srv: ServerProc;
let keyFile: string;
let db: string;

beforeAll(async () => {
  const dir = tempDir('signing-log');
  keyFile = join(dir, 'engine.key');
  newEngineKey(keyFile, 'wire.test');
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

  it('a database rewritten after its seal was signed: the checkpoint GET signs nothing and answers internal (500) naming TALLY_SIGN_EQUIVOCATION', async () => {
    const dir = tempDir('signing-log-rewritten');
    const file = join(dir, 'rewritten.db');
    const store = new SqliteStore(file);
    const engine = createEngine({ store });
    const { sid } = await intentDay({ engine, name: 'rewritten-wire-day' });
    const sealed = await createNotary({ key: await loadEngineKeyFile(keyFile) }).sealWithReceipt(engine, sid);
    expect(sealed.ok).toBe(true);
    const lines = await linesOf(engine, sid);
    await store.close();
    const forged = reseal(entriesOf(lines).map((e) => (e.kind === 'finalize' ? { ...e, artifacts: { note: 'a better day' } } : e))).lines;
    const raw = new Database(file);
    raw.exec('DROP TRIGGER entries_immutable_update');
    const last = forged.length - 1;
    raw.prepare('UPDATE entries SET hash = ?, bytes = ? WHERE session_id = ? AND idx = ?').run(toHex(entryHash(sha256, forged[last]!)), Buffer.from(forged[last]!), sid, last);
    raw.close();
    const other = await startServer({ dir, db: file, args: ['--key', keyFile] });
    try {
      const r = await get(other.url, RT, `/sessions/${sid}/checkpoint`);
      expect(r.status).toBe(500);
      expect(JSON.parse(r.text).error).toMatchObject({ type: 'internal', retryable: false, message: expect.stringContaining('TALLY_SIGN_EQUIVOCATION') });
      expect(r.text).not.toContain('\u2014');
    } finally {
      expect(await other.stop()).toBe(0);
    }
  });
});
