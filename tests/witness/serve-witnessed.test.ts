/**
 * `tally serve --key --witness-policy`: a serving engine submits each
 * checkpoint it signs to the policy's witnesses and serves it cosigned.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { SqliteStore } from '../../src/store/index.js';
import { parseWitnessPolicy, checkWitnessPolicy } from '../../src/witness/index.js';
import { TALLY, tally } from '../cli/helpers.js';
import { rpc, startServer, TOKENS } from '../server/helpers.js';
import { runDay } from '../helpers/day.js';
import { startListening } from './serve.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-serve-w-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { TALLY_KEY: join(dir, 'engine.key'), TALLY_ENGINE_NAME: 'tally.example/desk' };

describe('tally serve --witness-policy', () => {
  it('serves checkpoints and turn receipts carrying the witness cosignature', async () => {
    const db = join(dir, 'day.db');
    const store = new SqliteStore(db);
    const { sid } = await runDay({ engine: createEngine({ store }), finalize: false });
    await store.close();
    const vkey = tally(['key', 'new'], { cwd: dir, env }).stdout.trim();
    const wvkey = tally(['witness', 'keygen', '--name', 'w1.example', '--key', join(dir, 'w1.key')]).stdout.trim();
    const w = await startListening([TALLY, 'witness', 'serve', '--key', join(dir, 'w1.key'), '--db', join(dir, 'w1.db'), '--log-key', vkey]);
    const hex = Buffer.from(wvkey.split('+').slice(2).join('+'), 'base64').subarray(1).toString('hex');
    const policyText = `witness w1.example ${hex} ${w.url}\nquorum w1.example\n`;
    writeFileSync(join(dir, 'policy'), policyText);
    const policy = parseWitnessPolicy(policyText);
    if (!policy.ok) throw new Error(policy.message);
    expect(tally(['serve', '--db', db, '--witness-policy', join(dir, 'policy'), '--auth', join(dir, 'none.json')]).code).toBe(2);
    const server = await startServer({ db, args: ['--key', env.TALLY_KEY, '--witness-policy', join(dir, 'policy')], env, dir });
    try {
      const get = async (path: string) => (await fetch(`${server.url}/sessions/${sid}/${path}`, { headers: { authorization: `Bearer ${TOKENS.auditor}` } })).text();
      const cp = await get('checkpoint');
      const { parseVerifierKey } = await import('../../src/receipt/index.js');
      const engine = parseVerifierKey(vkey);
      if (!engine.ok) throw new Error(engine.message);
      expect(checkWitnessPolicy(cp, [engine.verifier], policy.policy)).toMatchObject({ ok: true, signed: ['w1.example'] });
      writeFileSync(join(dir, 'r.tlog-proof'), await get('turn-receipt?index=1'));
      const v = tally(['verify-proof', 'r.tlog-proof', '--vkey', vkey, '--policy', 'policy'], { cwd: dir });
      expect([v.code, v.stdout]).toEqual([0, expect.stringContaining('cosigned by  w1.example')]);
      // The seal from the finalize RPC goes through the witnessed notary too: its checkpoint comes back cosigned.
      const fin = await rpc(server.url, TOKENS.runtime, 'session/finalize', { sessionId: sid });
      const sealed = fin.body.result as { signedCheckpoint?: string; receipt?: { size: number } } | undefined;
      expect(sealed?.signedCheckpoint).toEqual(expect.any(String));
      expect(checkWitnessPolicy(sealed!.signedCheckpoint!, [engine.verifier], policy.policy)).toMatchObject({ ok: true, signed: ['w1.example'] });
      // The session's tlog-tiles checkpoint is that latest signed one, with the witness's cosignature (docs/PROTOCOL.md §15.4.1).
      expect(await get('tiles/checkpoint')).toBe(sealed!.signedCheckpoint);
      // ... and the engine's signing log recorded the sealed checkpoint before any witness saw it.
      const after = new SqliteStore(db);
      const origin = sealed!.signedCheckpoint!.slice(0, sealed!.signedCheckpoint!.indexOf('\n'));
      expect((await after.signedCheckpoints(origin)).map((r) => r.size)).toContain(sealed!.receipt!.size);
      await after.close();
    } finally {
      await server.stop();
      w.child.kill('SIGTERM');
      await w.exited;
    }
  });
});
