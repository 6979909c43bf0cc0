/**
 * A witness that is not Tally's may answer a second root at the size it
 * holds with a bare 409 (no `text/x.tlog.size` body). C2SP tlog-witness: a
 * 409 says the submission's old size is not what the witness cosigned, so
 * such an answer, at the size the engine knows the witness holds, is the
 * same conflict as a sized 409 naming that size — a `root-mismatch`, which
 * bars signing the origin — not a malformed answer. A 409 that claims
 * `text/x.tlog.size` but breaks it stays malformed. The peer here is a plain
 * HTTP server speaking exactly those bytes (no witness implementation of
 * that dialect is installable on this machine); Tally's own witness answers
 * sized 409s (tests/witness/http.test.ts).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { createNotary, generateEngineKey } from '../../src/receipt/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { cosignerKeyFrom, createWitnessedNotary, submitCheckpoint, WITNESS_CONFLICT_CODE } from '../../src/witness/index.js';
import { runDay } from '../helpers/day.js';

const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

const body = async (req: IncomingMessage): Promise<string> => {
  let t = '';
  for await (const c of req) t += String(c);
  return t;
};

/** A peer answering every submission with `answer(oldSize)`: [content type, body]. */
async function peer(answer: (old: number) => [string, string]): Promise<string> {
  const s = createServer(async (req, res) => {
    const old = Number(/^old (\d+)\n/.exec(await body(req))?.[1] ?? -1);
    const [type, text] = answer(old);
    res.writeHead(409, { 'content-type': type });
    res.end(text);
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

describe('a 409 without a size body', () => {
  it('submitCheckpoint reads it as conflict-unsized; a broken text/x.tlog.size body stays malformed', async () => {
    const bare = await peer(() => ['text/plain; charset=utf-8', 'checkpoint conflicts with the one I cosigned\n']);
    expect(await submitCheckpoint(bare, 'old 0\n\n')).toEqual({ kind: 'conflict-unsized', message: 'checkpoint conflicts with the one I cosigned' });
    const empty = await peer(() => ['text/plain', '']);
    expect(await submitCheckpoint(empty, 'old 0\n\n')).toEqual({ kind: 'conflict-unsized', message: '' });
    for (const broken of ['', '12', '012\n', '1\n2\n', ' 4\n']) {
      const p = await peer(() => ['text/x.tlog.size', broken]);
      expect(await submitCheckpoint(p, 'old 0\n\n')).toMatchObject({ kind: 'refused', status: 409 });
    }
    const sized = await peer(() => ['text/x.tlog.size', '7\n']);
    expect(await submitCheckpoint(sized, 'old 0\n\n')).toEqual({ kind: 'conflict', size: 7 });
  });

  it('at the size the witness holds is a root-mismatch conflict that bars signing; from a smaller old size it bars nothing', async () => {
    const engineKey = generateEngineKey('tally.example/desk');
    const wkey = cosignerKeyFrom(generateEngineKey('w1.example'));
    const store = new MemoryStore();
    const engine = createEngine({ store });
    const { sid } = await runDay({ engine, wakes: 2, finalize: false });
    const size = (await store.loadHead(sid))!.size;

    // From old size 0 the peer says (sized) that it holds `size`; asked again from there, a bare 409: another root at `size`.
    const url = await peer((old) => (old === 0 ? ['text/x.tlog.size', `${size}\n`] : ['text/plain', 'root mismatch\n']));
    const notary = createWitnessedNotary({ notary: createNotary({ key: engineKey }), witnesses: [{ url, verifier: wkey.verifier }] });
    await expect(notary.issueCheckpoint(engine, sid)).rejects.toMatchObject({ code: WITNESS_CONFLICT_CODE, message: expect.stringContaining('(root-mismatch)') });
    expect(notary.conflicts()).toEqual([expect.objectContaining({ witness: 'w1.example', reason: 'root-mismatch', witnessSize: size, storeSize: size })]);
    await expect(notary.issueCheckpoint(engine, sid, 3)).rejects.toMatchObject({ code: WITNESS_CONFLICT_CODE });

    // A bare 409 to a submission from a smaller old size says only "not that size": reported, not a fork.
    const w2 = cosignerKeyFrom(generateEngineKey('w2.example'));
    const other = createWitnessedNotary({ notary: createNotary({ key: engineKey }), witnesses: [{ url: await peer(() => ['text/plain', '']), verifier: w2.verifier }] });
    const cp2 = await other.issueCheckpoint(engine, sid, 3);
    expect(cp2.ok).toBe(true);
    expect(other.conflicts()).toEqual([]);
    expect(other.report(`${engineKey.name}/${sid}`, 3)?.outcomes).toEqual([expect.objectContaining({ witness: 'w2.example', status: 'conflict', message: expect.stringContaining('409 without its size') })]);
  });
});
