/**
 * Intent-ruled turns under a wall-clock jump (libfaketime under `tally serve`,
 * the timestamp file re-read on every call): a day under a mandate whose
 * lifetime window opens and closes mid-day, every turn carrying an intent
 * signed by its agent. The frame times are the real time of the test run, so
 * a ruler that looked at the wall clock would rule differently in the true
 * run (the mandate not started yet) and in the jumped one (400 days later:
 * long expired). Rulings follow frame time only: the run whose clock jumps
 * 400 days forward, then 400 days behind the true time, answers every call
 * exactly as the true-clock run, and every entry byte is the same.
 * Only the wall clock is faked (FAKETIME_DONT_FAKE_MONOTONIC=1).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIntent, type UnsignedIntentInput } from '../../src/intent/index.js';
import type { CanonicalObject } from '../../src/protocol/index.js';
import { mandate, signSpecSync } from '../referee/fixtures.js';
import { KEY_ALPHA, alpha, beta, carry, iso } from '../rules/fixtures.js';
import { TOKENS, cleanup, get, ok, rpc, startServer, tempDir } from '../server/helpers.js';
import { FAKETIME_PRELOAD, faketimeSkip, warnSkips } from './helpers/tools.js';

warnSkips('clock-mandate.test.ts', [faketimeSkip]);
afterAll(cleanup);

const MINUTE = 60_000;
const DAY = 86_400_000;

/** One turn of the day: the intent alpha signs (or a stand-down), and the ruling expected from frame time alone. */
interface Step {
  readonly intent?: Partial<UnsignedIntentInput> & { readonly ttlAfterFrame?: number };
  readonly expect: string;
}

/** Ordinal -1 is the OPEN frame; the mandate runs from ordinal 1's frame to ordinal 5's (exclusive). */
const STEPS: readonly Step[] = [
  { intent: { market: 'BTC-PERP' }, expect: 'mandate_not_started' },
  { expect: 'stand-down' },
  { intent: { market: 'BTC-PERP' }, expect: 'admitted' },
  { intent: { market: 'BTC-PERP', size: '9' }, expect: 'cap_exceeded' },
  { intent: { market: 'ETH-PERP', ttlAfterFrame: -10 * MINUTE }, expect: 'expired' },
  { intent: { market: 'ETH-PERP', side: 'short' }, expect: 'admitted' },
  { intent: { market: 'BTC-PERP' }, expect: 'mandate_expired' },
  { expect: 'stand-down' },
];

/** The day's frame times start at the real minute of this run. */
let base = 0;
const frameAt = (ordinal: number) => base + (ordinal + 1) * MINUTE;
let intents: (Record<string, unknown> | undefined)[] = [];

beforeAll(async () => {
  base = Math.floor(Date.now() / MINUTE) * MINUTE;
  intents = await Promise.all(
    STEPS.map(async (s, i) => {
      if (s.intent === undefined) return undefined;
      const { ttlAfterFrame, ...over } = s.intent;
      const u = { action: 'open', agent_id: 'alpha', nonce: `clock-${i}`, ttl: iso(frameAt(i - 1) + (ttlAfterFrame ?? 30 * MINUTE)), size: '1', market: 'BTC-PERP', side: 'long', leverage: '3', max_slippage: '0.01', ...over } as UnsignedIntentInput;
      return (await signIntent(u, KEY_ALPHA)) as unknown as Record<string, unknown>;
    }),
  );
});

/** What a ruling says, in one word: admitted (by the intent check and the mandate), the first denial code, or stand-down. */
function said(turn: Record<string, unknown>): string {
  const r = turn['ruling'] as { intent?: { admitted: boolean; code?: string }; policy?: { admitted: boolean; code?: string } } | undefined;
  if (r === undefined) return 'stand-down';
  if (r.intent?.admitted !== true) return String(r.intent?.code);
  return r.policy?.admitted === true ? 'admitted' : String(r.policy?.code);
}

/** Drives the day; `jump(i)` runs before step i. Returns every answer, the rulings in words, the sealed bundle, and the server's own clock readings. */
async function runDay(env: Record<string, string>, jump: (step: number) => void) {
  const dir = tempDir('clock-mandate');
  const srv = await startServer({ dir, db: join(dir, 'tally.db'), env });
  const answers: string[] = [];
  const rulings: string[] = [];
  try {
    // Signed by its principal (Anvil #3): the engine opens no unsigned mandate.
    const spec = signSpecSync({ name: 'clock-mandate', agents: { alpha: alpha.address, beta: beta.address }, intent: { maxTtlHorizonMs: 3_600_000 }, mandate: mandate({ starts_at: frameAt(1), expires_at: frameAt(5) }) as CanonicalObject });
    const open = ok(await rpc(srv.url, TOKENS.runtime, 'session/open', { spec }));
    const sid = open['sessionId'] as string;
    answers.push(JSON.stringify(open));
    for (let i = 0; i < STEPS.length; i++) {
      jump(i);
      const ordinal = i - 1;
      const f = ok(await rpc(srv.url, TOKENS.runtime, 'session/frame', { sessionId: sid, ordinal, time: frameAt(ordinal), data: { ordinal } }));
      const intent = intents[i];
      const body = intent === undefined ? { kind: 'stand-down', failureClass: 'timeout' } : { kind: 'authored', text: new TextDecoder().decode(carry(intent, `step ${i}`)) };
      const t = ok(await rpc(srv.url, intent === undefined ? TOKENS.runtime : TOKENS.alpha, 'session/turn', { sessionId: sid, ordinal, parentHash: f['entryHash'], frameRoot: f['frameRoot'], body }));
      answers.push(JSON.stringify(f), JSON.stringify(t));
      rulings.push(said(t));
    }
    answers.push(JSON.stringify(ok(await rpc(srv.url, TOKENS.runtime, 'session/finalize', { sessionId: sid }))));
    const described = ok(await rpc(srv.url, TOKENS.runtime, 'session/describe', { sessionId: sid }));
    answers.push(JSON.stringify(described));
    const b = await get(srv.url, TOKENS.runtime, `/sessions/${sid}/bundle`);
    expect(b.status).toBe(200);
    const now = srv
      .stderr()
      .split('\n')
      .flatMap((l) => /"time":(\d+)/.exec(l)?.[1] ?? [])
      .map(Number);
    expect(await srv.stop()).toBe(0);
    return { answers, rulings, bundle: b.text, now };
  } finally {
    await srv.stop('SIGKILL');
  }
}

describe.skipIf(faketimeSkip !== undefined)('intent-ruled turns under a mandate while the wall clock jumps (libfaketime)', () => {
  it('a clock jumping 400 days forward then behind mid-day changes no ruling, no answer and no byte of the bundle', async () => {
    const truth = await runDay({}, () => {});
    expect(truth.rulings, 'rulings follow frame time (the mandate window and the intent ttl)').toEqual(STEPS.map((s) => s.expect));
    const stamp = join(tempDir('faketime-mandate'), 'faketime.rc');
    writeFileSync(stamp, '+0d\n');
    const env = { LD_PRELOAD: FAKETIME_PRELOAD!, FAKETIME_TIMESTAMP_FILE: stamp, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' };
    const jumped = await runDay(env, (step) => {
      if (step === 2) writeFileSync(stamp, '+400d\n');
      if (step === 5) writeFileSync(stamp, '-400d\n');
    });
    expect(jumped.rulings).toEqual(truth.rulings);
    expect(jumped.answers).toEqual(truth.answers);
    expect(jumped.bundle).toBe(truth.bundle);
    // The faked server really saw its clock jump (beyond the mandate's end, and before its start).
    expect(Math.max(...jumped.now) - Date.now()).toBeGreaterThan(300 * DAY);
    expect(Date.now() - Math.min(...jumped.now)).toBeGreaterThan(300 * DAY);
    console.log(`[faults] clock under a mandate: libfaketime +400 d then -400 d mid-day: ${truth.rulings.length} rulings (${truth.rulings.join(', ')}), ${truth.answers.length} answers and ${truth.bundle.length} bundle bytes identical to the true-clock run`);
  });
});
