/**
 * Wall-clock jumps under `tally serve` (libfaketime, timestamp file re-read on
 * every call): the same day driven by a server whose clock jumps 400 days
 * forward and then 800 days back mid-day answers every call exactly as a
 * server with a true clock, and the sealed bundle bytes are identical. Frames
 * carry their time; nothing recorded comes from the server's clock.
 * Only the wall clock is faked (FAKETIME_DONT_FAKE_MONOTONIC=1): monotonic
 * clocks do not jump on a real machine.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TOKENS, cleanup, get, startServer, tempDir } from '../server/helpers.js';
import { untilOk, type DriveStats } from './helpers/drive.js';
import { FAKETIME_PRELOAD, faketimeSkip, warnSkips } from './helpers/tools.js';

warnSkips('clock.test.ts', [faketimeSkip]);
afterAll(cleanup);

/** Drives one fixed day; `jump(i)` runs before step i. Returns every answer and the sealed bundle. */
async function runDay(env: Record<string, string>, jump: (step: number) => void): Promise<{ answers: string[]; bundle: string; now: string[] }> {
  const dir = tempDir('clock');
  const srv = await startServer({ dir, db: join(dir, 'tally.db'), env });
  const stats: DriveStats = { acks: 0, duplicates: 0, unavailable: 0 };
  const answers: string[] = [];
  const now: string[] = [];
  try {
    const open = await untilOk(srv.url, 'session/open', { spec: { name: 'clock-day', day: '2026-11-30', run: 'fixed' } }, stats);
    const sid = open['sessionId'] as string;
    answers.push(JSON.stringify(open));
    for (let ordinal = -1; ordinal < 8; ordinal++) {
      jump(ordinal + 1);
      const f = await untilOk(srv.url, 'session/frame', { sessionId: sid, ordinal, time: 1_700_000_000_000 + (ordinal + 2) * 60_000, data: { ordinal } }, stats);
      const t = await untilOk(srv.url, 'session/turn', { sessionId: sid, ordinal, parentHash: f['entryHash'], frameRoot: f['frameRoot'], body: ordinal % 3 === 2 ? { kind: 'stand-down', failureClass: 'timeout' } : { kind: 'authored', text: `step ${ordinal}` } }, stats);
      answers.push(JSON.stringify(f), JSON.stringify(t));
    }
    answers.push(JSON.stringify(await untilOk(srv.url, 'session/finalize', { sessionId: sid }, stats)));
    answers.push(JSON.stringify(await untilOk(srv.url, 'session/describe', { sessionId: sid }, stats)));
    const b = await get(srv.url, TOKENS.runtime, `/sessions/${sid}/bundle`);
    expect(b.status).toBe(200);
    // The server's own clock as its log shows it (proves the jumps happened).
    for (const line of srv.stderr().split('\n')) {
      const m = /"time":(\d+)/.exec(line);
      if (m) now.push(m[1]!);
    }
    expect(await srv.stop()).toBe(0);
    return { answers, bundle: b.text, now };
  } finally {
    await srv.stop('SIGKILL');
  }
}

describe.skipIf(faketimeSkip !== undefined)('wall-clock jumps under tally serve (libfaketime)', () => {
  it('a clock jumping 400 days forward then 800 back mid-day changes no answer, no ruling and no byte of the bundle', async () => {
    const truth = await runDay({}, () => {});
    const dir = tempDir('faketime');
    const stamp = join(dir, 'faketime.rc');
    writeFileSync(stamp, '+0d\n');
    const env = { LD_PRELOAD: FAKETIME_PRELOAD!, FAKETIME_TIMESTAMP_FILE: stamp, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' };
    const jumped = await runDay(env, (step) => {
      if (step === 3) writeFileSync(stamp, '+400d\n');
      if (step === 6) writeFileSync(stamp, '-400d\n');
    });
    expect(jumped.answers).toEqual(truth.answers);
    expect(jumped.bundle).toBe(truth.bundle);
    // The faked server really saw its clock jump (forward beyond and back behind the true one).
    const day = 86_400_000;
    const times = jumped.now.map(Number);
    expect(Math.max(...times) - Date.now()).toBeGreaterThan(300 * day);
    expect(Date.now() - Math.min(...times)).toBeGreaterThan(300 * day);
    console.log(`[faults] clock: libfaketime +400 d then -400 d mid-day: ${truth.answers.length} answers and ${truth.bundle.length} bundle bytes identical to the true-clock run`);
  });
});
