/**
 * `tally judge serve` from outside: a judge service on loopback that signs its
 * own verdicts; the referee trusts its key (not one the operator holds), so a
 * panel admits on its answer and the ruling carries no signed_by label.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_JUDGE_MODEL, createOpenAiJudge } from '../../src/referee/index.js';
import { carry, frameTime, iso, openIntent, signed } from '../rules/fixtures.js';
import { Desk, KEY_OTHER, mandate, refereeSpec, ruling } from '../referee/fixtures.js';
import { TALLY, tally } from './helpers.js';
import { portOf, stall } from '../helpers/stall.js';

const SERVICE_KEY = `0x${'0a'.repeat(32)}` as const;
const SERVICE = privateKeyToAccount(SERVICE_KEY).address.toLowerCase();
let child: ChildProcess;
let url = '';
const dir = mkdtempSync(join(tmpdir(), 'tally-judge-'));

beforeAll(async () => {
  writeFileSync(join(dir, 'judge.key'), SERVICE_KEY + '\n', { mode: 0o600 });
  child = spawn(process.execPath, [TALLY, 'judge', 'serve', '--key', join(dir, 'judge.key'), '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const m = /^tally judge: listening on (http:\/\/127\.0\.0\.1:\d+) signer (0x[0-9a-f]{40})\n/.exec(out);
      if (m) {
        expect(m[2]).toBe(SERVICE);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`tally judge serve exited ${code}: ${out}`)));
  });
});

afterAll(async () => {
  if (child.exitCode === null) {
    const done = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    expect(await done).toBe(0);
  }
});

const rules = ['Only long positions.'];
let n = 1;
async function judgeWith(signature: Parameters<typeof createOpenAiJudge>[0]['signature'], signer = SERVICE, side = 'long') {
  const judge = createOpenAiJudge({ baseUrl: `${url}/v1`, model: LOCAL_JUDGE_MODEL, signature, timeoutMs: 30_000 });
  const desk = await Desk.open(refereeSpec(`judge-serve-${n}`, mandate({ rules, panel: { judges: [{ signer, model: LOCAL_JUDGE_MODEL, endpoint: `${url}/v1` }], quorum: 1 } })), { panel: [judge] });
  const intent = await signed(openIntent({ nonce: `js${n++}`, side, ttl: iso(frameTime(-1) + 1_800_000) }));
  return ruling(await desk.answer(carry(intent, 'trend up')));
}

describe('tally judge serve (loopback)', () => {
  it('signs its own answers: a panel naming its key admits, and nothing is labelled operator', async () => {
    const r = await judgeWith({ header: 'x-verdict-signature' });
    expect(r.verdict).toMatchObject({ admitted: true, quorum: { k: 1, n: 1, allow: 1 } });
    expect(r.verdict!.panel![0]).toMatchObject({ judge: SERVICE, signer: SERVICE, decision: 'ALLOW', admitted: true });
    expect(r.verdict!.panel![0]!.signed_by).toBeUndefined();
    const deny = await judgeWith({ header: 'x-verdict-signature' }, SERVICE, 'short');
    expect(deny.verdict).toMatchObject({ admitted: false, code: 'judge_quorum_not_met', panel: [{ decision: 'DENY', code: 'judge_denied' }] });
  });

  it("a mandate trusting a key the operator holds: the operator's re-signature of the model's reply is labelled signed_by operator", async () => {
    const OPERATOR_HELD = privateKeyToAccount(KEY_OTHER).address.toLowerCase();
    const r = await judgeWith({ key: KEY_OTHER }, OPERATOR_HELD);
    expect(r.verdict).toMatchObject({ admitted: true });
    expect(r.verdict!.panel![0]).toMatchObject({ judge: OPERATOR_HELD, signer: OPERATOR_HELD, signed_by: 'operator' });
  });

  it('--headers-timeout: a stalled header is answered 408 and cut at the setting (the limits of tally serve)', async () => {
    const slow = spawn(process.execPath, [TALLY, 'judge', 'serve', '--key', join(dir, 'judge.key'), '--port', '0', '--headers-timeout', '600'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const at = await new Promise<string>((resolve, reject) => {
        let out = '';
        slow.stdout!.on('data', (c: Buffer) => {
          out += c.toString('utf8');
          const m = /listening on (http:\/\/\S+) /.exec(out);
          if (m) resolve(m[1]!);
        });
        slow.once('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      const { order, got } = await stall(portOf(at), 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n', 600);
      expect(order).toEqual(['setting', 'closed']);
      expect(got).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      const done = new Promise((r) => slow.once('exit', r));
      slow.kill('SIGTERM');
      expect(await done).toBe(0);
    }
    expect(tally(['judge', 'serve', '--key', join(dir, 'judge.key'), '--request-timeout', 'x']).code).toBe(2);
  });

  it('refuses a missing or malformed key (exit 2) and an unknown subcommand', () => {
    expect(tally(['judge', 'serve', '--port', '0'], { env: { TALLY_JUDGE_KEY_FILE: '' } })).toMatchObject({ code: 2 });
    writeFileSync(join(dir, 'bad.key'), 'nope\n');
    const bad = tally(['judge', 'serve', '--key', join(dir, 'bad.key'), '--port', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('must hold exactly one 0x-prefixed 32-byte hex key');
    expect(tally(['judge', 'listen']).code).toBe(2);
  });
});
