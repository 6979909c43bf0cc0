/**
 * The typed client against a real `tally serve --key` (issue #28): finalize
 * and receipt declare the signed checkpoint and verifier key the wire returns;
 * checkpoint, turnReceipt, consistency and verifierKey fetch the signed reads,
 * which the built CLI then verifies; `tally mcp --url` with a bad token fails
 * at start.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createClient, rulingView, WireError, type ClientFinalizeResult, type ClientReceipt } from '../../src/client/index.js';
import { TOKENS, cleanup, newEngineKey, startServer, tempDir, type ServerProc } from '../server/helpers.js';
import { TALLY, tally } from './helpers.js';

let srv: ServerProc;
let vkey: string;
const dir = tempDir('client-signed');

beforeAll(async () => {
  const keyFile = join(dir, 'engine.key');
  vkey = newEngineKey(keyFile, 'client.test');
  srv = await startServer({ dir, db: 'memory:', args: ['--key', keyFile, '--engine-name', 'client.test'] });
});

afterAll(async () => {
  await srv?.stop();
  cleanup();
});

describe('the typed client, signed reads', () => {
  it('finalize and receipt carry signedCheckpoint and verifierKey; checkpoint, turnReceipt, consistency and verifierKey are methods', async () => {
    const c = createClient({ url: srv.url, token: TOKENS.runtime });
    const open = await c.open({ name: 'client-signed' });
    if (!open.ok) throw new Error(open.message);
    const sid = open.sessionId;
    const f = await c.frame({ sessionId: sid, ordinal: -1, time: 1_900_000_000_000 });
    if (!f.ok) throw new Error(f.message);
    const t = await c.turn({ sessionId: sid, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text: 'hold' } });
    if (!t.ok) throw new Error(t.message);
    expect(rulingView(t)).toBeUndefined(); // a plain note carries no ruling
    const fin = await c.finalize(sid);
    expectTypeOf(fin).toEqualTypeOf<ClientFinalizeResult>();
    if (!fin.ok) throw new Error(fin.message);
    expect(fin.signedCheckpoint).toMatch(/^client\.test\/[0-9a-f]{64}\n4\n/);
    const receipt = await c.receipt(sid);
    expectTypeOf(receipt).toEqualTypeOf<ClientReceipt>();
    expect(receipt.verifierKey).toBe(vkey);
    expect(await c.verifierKey()).toBe(vkey);
    const cp = await c.checkpoint(sid);
    expect(cp).toContain(`\n${receipt.size}\n`);
    const turnReceipt = await c.turnReceipt(sid, 2);
    const consistency = await c.consistency(sid, 2);
    expect(consistency.length).toBeGreaterThan(0);
    // What the client fetched verifies offline with the built CLI.
    writeFileSync(join(dir, 'cp.note'), cp);
    writeFileSync(join(dir, 't2.tlog-proof'), turnReceipt);
    const v = tally(['verify-proof', join(dir, 't2.tlog-proof'), '--vkey', vkey, '--checkpoint', join(dir, 'cp.note')]);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/^valid: entry 2 of session /);
    await expect(c.turnReceipt(sid, 99)).rejects.toBeInstanceOf(WireError);
  });

  it('tally mcp --url with a bad token fails at start, naming the refusal', () => {
    const tokenFile = join(dir, 'bad.token');
    writeFileSync(tokenFile, 'tly_not_a_configured_token_0123456789\n');
    const r = spawnSync(process.execPath, [TALLY, 'mcp', '--url', srv.url, '--token-file', tokenFile, '--log-level', 'silent'], { encoding: 'utf8', input: '', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain('refused the token (unauthorized)');
    const good = join(dir, 'good.token');
    writeFileSync(good, TOKENS.runtime);
    // A good token starts; stdin at its end closes the bridge: exit 0.
    const ok = spawnSync(process.execPath, [TALLY, 'mcp', '--url', srv.url, '--token-file', good, '--log-level', 'silent'], { encoding: 'utf8', input: '', timeout: 60_000 });
    expect(ok.status, ok.stderr).toBe(0);
  });
});
