/**
 * `--judge <url>` from outside: `tally turn` asks a real `tally judge serve`
 * on loopback for a mandate with semantic rules, and the recorded ruling
 * carries the signed verdict — signed by the judge itself
 * (`--judge-signature-header`) or by the operator (`--judge-key`, labelled
 * signed_by operator). Without --judge such an intent is denied.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { carry, frameTime, iso, openIntent, signed } from '../rules/fixtures.js';
import { KEY_OTHER, mandate, refereeSpec } from '../referee/fixtures.js';
import { TOKENS, ok, rpc, startServer } from '../server/helpers.js';
import { TALLY, tally } from './helpers.js';

const SERVICE_KEY = `0x${'0b'.repeat(32)}` as const;
const SERVICE = privateKeyToAccount(SERVICE_KEY).address.toLowerCase();
const OPERATOR_HELD = privateKeyToAccount(KEY_OTHER).address.toLowerCase();
const dir = mkdtempSync(join(tmpdir(), 'tally-judge-flag-'));
let child: ChildProcess;
let url = '';

beforeAll(async () => {
  writeFileSync(join(dir, 'judge.key'), SERVICE_KEY + '\n', { mode: 0o600 });
  writeFileSync(join(dir, 'operator.key'), KEY_OTHER + '\n', { mode: 0o600 });
  child = spawn(process.execPath, [TALLY, 'judge', 'serve', '--key', join(dir, 'judge.key'), '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const m = /^tally judge: listening on (http:\/\/127\.0\.0\.1:\d+) signer (0x[0-9a-f]{40})\n/.exec(out);
      if (m) resolve(m[1]!);
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

let n = 0;
/** A fresh session under a mandate whose rule is judged by `signer`, its OPEN frame delivered; the answer is `tally turn --auto` with `judgeArgs`. */
async function turnWith(signer: string, judgeArgs: string[], side = 'long') {
  const db = join(dir, `day-${++n}.db`);
  writeFileSync(join(dir, `spec-${n}.json`), JSON.stringify(refereeSpec(`cli-judge-${n}`, mandate({ rules: ['Only long positions.'], judges: [signer] }))));
  const open = tally(['open', '--spec', `@${join(dir, `spec-${n}.json`)}`, '--db', db, '--json']);
  expect(open.code, open.stderr).toBe(0);
  const sid = (JSON.parse(open.stdout) as { sessionId: string }).sessionId;
  const frame = tally(['frame', '--session', sid, '--ordinal', 'open', '--time', iso(frameTime(-1)), '--db', db]);
  expect(frame.code, frame.stderr).toBe(0);
  const intent = await signed(openIntent({ nonce: `jf${n}`, side, ttl: iso(frameTime(-1) + 1_800_000) }));
  const turn = tally(['turn', '--session', sid, '--auto', '--text', new TextDecoder().decode(carry(intent, 'trend up')), '--db', db, '--json', ...judgeArgs]);
  return { ...turn, db, sid };
}

type Verdict = { admitted: boolean; source: string; signer: string; signature: string; model: string; decision?: string; code?: string; signed_by?: string };
const verdictOf = (stdout: string): Verdict => (JSON.parse(stdout) as { ruling: { verdict: Verdict } }).ruling.verdict;

describe('tally turn --judge (a real tally judge serve on loopback)', () => {
  it('--judge-signature-header: the judge signs its own answer; the ruling carries its signed verdict, not labelled operator', async () => {
    const t = await turnWith(SERVICE, ['--judge', `${url}/v1`, '--judge-signature-header', 'x-verdict-signature', '--judge-timeout', '30000']);
    expect(t.code, t.stderr).toBe(0);
    const v = verdictOf(t.stdout);
    expect(v).toMatchObject({ admitted: true, source: 'judged', decision: 'ALLOW', signer: SERVICE, model: 'tally-local-rules-v1' });
    expect(v.signature).toMatch(/^0x[0-9a-f]{130}$/);
    expect(v.signed_by).toBeUndefined();
    const denied = await turnWith(SERVICE, ['--judge', `${url}/v1`, '--judge-signature-header', 'x-verdict-signature'], 'short');
    expect(denied.code, denied.stderr).toBe(0);
    expect(verdictOf(denied.stdout)).toMatchObject({ admitted: false, decision: 'DENY', signer: SERVICE });
  });

  it('--judge-key: the operator signs the answer, and the ruling labels it signed_by operator', async () => {
    const t = await turnWith(OPERATOR_HELD, ['--judge', `${url}/v1`, '--judge-key', join(dir, 'operator.key')]);
    expect(t.code, t.stderr).toBe(0);
    expect(verdictOf(t.stdout)).toMatchObject({ admitted: true, source: 'judged', signer: OPERATOR_HELD, signed_by: 'operator' });
  });

  it('without --judge the rule cannot be judged: denied (judge_unavailable)', async () => {
    const t = await turnWith(SERVICE, []);
    expect(t.code, t.stderr).toBe(0);
    expect(verdictOf(t.stdout)).toMatchObject({ admitted: false });
    expect(t.stdout).toContain('judge_unavailable');
  });

  it('refuses an incomplete or contradictory judge set (exit 2, says what is missing)', () => {
    const args = ['turn', '--session', 'a'.repeat(64), '--auto', '--text', 'x', '--db', join(dir, 'day-1.db')];
    const none = tally([...args, '--judge', `${url}/v1`]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--judge needs exactly one of --judge-signature-header <name>');
    expect(tally([...args, '--judge', `${url}/v1`, '--judge-signature-header', 'x-verdict-signature', '--judge-key', join(dir, 'operator.key')]).code).toBe(2);
    const orphan = tally([...args, '--judge-model', 'm']);
    expect(orphan.code).toBe(2);
    expect(orphan.stderr).toContain('need --judge <url>');
    expect(tally([...args, '--judge', 'ftp://x', '--judge-signature-header', 'h']).stderr).toContain('--judge must be an http(s) URL');
    expect(tally([...args, '--judge', `${url}/v1`, '--judge-signature-header', 'x', '--judge-timeout', '0']).code).toBe(2);
    const serve = tally(['serve', '--port', '0', '--db', 'memory:', '--judge', `${url}/v1`], { env: { TALLY_TOKENS: '{"tokens":[]}' } });
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain('--judge needs exactly one of');
  });
});

describe('tally serve --judge (a real tally judge serve on loopback)', () => {
  it('session/turn over HTTP is judged by the judge service; the ruling carries its signed verdict', async () => {
    const srv = await startServer({ db: 'memory:', args: ['--judge', `${url}/v1`, '--judge-signature-header', 'x-verdict-signature'] });
    try {
      const spec = refereeSpec('serve-judge', mandate({ rules: ['Only long positions.'], judges: [SERVICE] }));
      const { sessionId } = ok<{ sessionId: string }>(await rpc(srv.url, TOKENS.runtime, 'session/open', { spec }));
      const f = ok<{ entryHash: string; frameRoot: string }>(await rpc(srv.url, TOKENS.runtime, 'session/frame', { sessionId, ordinal: -1, time: frameTime(-1) }));
      const intent = await signed(openIntent({ nonce: 'serve1', ttl: iso(frameTime(-1) + 1_800_000) }));
      const text = new TextDecoder().decode(carry(intent, 'trend up'));
      const t = ok<{ ruling: { verdict: Verdict } }>(await rpc(srv.url, TOKENS.alpha, 'session/turn', { sessionId, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', text } }));
      expect(t.ruling.verdict).toMatchObject({ admitted: true, source: 'judged', decision: 'ALLOW', signer: SERVICE });
      expect(t.ruling.verdict.signature).toMatch(/^0x[0-9a-f]{130}$/);
    } finally {
      await srv.stop();
    }
  });
});
