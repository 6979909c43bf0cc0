/**
 * Witnesses as the engine's outside signing log (issue #34): a real `tally
 * witness serve` cosigns a 13-entry day from one store; then `tally serve`
 * runs on a store that holds less of that history or another one — fewer
 * entries (a store rolled back: a copy taken before), the same size with other
 * bytes, or a longer tree that does not extend the cosigned one. Each time
 * the witness's answer (409 with its size beyond the store, 409 at the size
 * sent, 422) makes the engine refuse to sign (TALLY_SIGN_WITNESS_CONFLICT,
 * 500, not retryable) before and after, log an error line, count
 * tally_witness_conflicts_total and fail /readyz's `witnesses` check.
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { SqliteStore } from '../../src/store/index.js';
import { TALLY, tally } from '../cli/helpers.js';
import { enc, runDay } from '../helpers/day.js';
import { newEngineKey, startServer, TOKENS } from '../server/helpers.js';
import { startListening, type Running } from './serve.js';

const dir = mkdtempSync(join(tmpdir(), 'tally-rollback-'));
const env = { TALLY_KEY: join(dir, 'engine.key'), TALLY_ENGINE_NAME: 'tally.example/desk' };
let witness: Running;
let policy: string;
let sid: string;

/** The runDay session (same genesis, so the same session id and origin), with frames carrying `tag`: other bytes from ordinal 0 on. */
async function otherDay(db: string, wakes: number, tag: string): Promise<void> {
  const store = new SqliteStore(db);
  const engine = createEngine({ store });
  const open = await engine.open({ name: 'test-day', day: '2026-11-30' });
  if (!open.ok) throw new Error(open.message);
  for (let ord = -1; ord < wakes; ord++) {
    const f = await engine.frame({ sessionId: open.sessionId, ordinal: ord, time: 1_000 + (ord + 1) * 60_000, data: { price: ord < 0 ? String(100 + ord) : `${tag}${ord}` } });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: open.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(`${tag} ${ord}`) } });
    if (!t.ok) throw new Error(t.message);
  }
  await store.close();
}

const auditor = { authorization: `Bearer ${TOKENS.auditor}` };

beforeAll(async () => {
  const vkey = newEngineKey(env.TALLY_KEY, env.TALLY_ENGINE_NAME); // the engine key is made on purpose (tally key new)
  const wvkey = tally(['witness', 'keygen', '--name', 'w1.example', '--key', join(dir, 'w1.key')]).stdout.trim();
  witness = await startListening([TALLY, 'witness', 'serve', '--key', join(dir, 'w1.key'), '--db', join(dir, 'w1.db'), '--log-key', vkey]);
  const hex = Buffer.from(wvkey.split('+').slice(2).join('+'), 'base64').subarray(1).toString('hex');
  policy = join(dir, 'policy');
  writeFileSync(policy, `witness w1.example ${hex} ${witness.url}\nquorum w1.example\n`);

  // The history the witness sees: a 5-entry store, copied (the backup), then grown to 13 entries and cosigned there.
  const early = new SqliteStore(join(dir, 'early.db'));
  ({ sid } = await runDay({ engine: createEngine({ store: early }), wakes: 1, finalize: false }));
  await early.close();
  copyFileSync(join(dir, 'early.db'), join(dir, 'backup.db'));
  const full = new SqliteStore(join(dir, 'day.db'));
  const again = await runDay({ engine: createEngine({ store: full }), wakes: 5, finalize: false });
  expect(again.sid).toBe(sid);
  await full.close();
  const server = await startServer({ db: join(dir, 'day.db'), args: ['--key', env.TALLY_KEY, '--witness-policy', policy], env, dir });
  try {
    const cp = await fetch(`${server.url}/sessions/${sid}/checkpoint`, { headers: auditor });
    expect(cp.status).toBe(200);
    const text = await cp.text();
    expect(text).toMatch(/^tally\.example\/desk\/[0-9a-f]{64}\n13\n/);
    expect(text).toContain('\u2014 w1.example ');
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  } finally {
    await server.stop();
  }
}, 120_000);

afterAll(async () => {
  witness?.child.kill('SIGTERM');
  await witness?.exited;
  rmSync(dir, { recursive: true, force: true });
});

interface Case {
  readonly name: string;
  readonly reason: 'ahead' | 'root-mismatch' | 'bad-consistency-proof';
  readonly storeSize: number;
  make(db: string): Promise<void>;
}

const cases: Case[] = [
  { name: 'a store restored from a copy taken at 5 entries', reason: 'ahead', storeSize: 5, make: async (db) => copyFileSync(join(dir, 'backup.db'), db) },
  { name: 'a store holding 13 other entries (same session, other bytes after the open frame)', reason: 'root-mismatch', storeSize: 13, make: (db) => otherDay(db, 5, 'b') },
  { name: 'a store holding 15 entries that do not extend the cosigned 13', reason: 'bad-consistency-proof', storeSize: 15, make: (db) => otherDay(db, 6, 'c') },
];

describe('tally serve refuses to sign over a history a witness cosigned and the store lost', () => {
  it.each(cases)('$name: $reason', async (c) => {
    const db = join(dir, `${c.reason}.db`);
    await c.make(db);
    const server = await startServer({ db, args: ['--key', env.TALLY_KEY, '--witness-policy', policy], env, dir });
    try {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      const refused = await fetch(`${server.url}/sessions/${sid}/checkpoint`, { headers: auditor });
      const body = (await refused.json()) as { error: { code: string; retryable: boolean; message: string } };
      expect([refused.status, body.error.retryable]).toEqual([500, false]);
      expect(body.error.message).toContain('TALLY_SIGN_WITNESS_CONFLICT');

      // The error line, once per contradicting answer.
      await server.untilStderr((e) => e.includes('"event":"witness-conflict"'));
      const line = JSON.parse(server.stderr().split('\n').find((l) => l.includes('"event":"witness-conflict"'))!) as Record<string, unknown>;
      expect(line).toMatchObject({ level: 50, event: 'witness-conflict', witness: 'w1.example', reason: c.reason, witnessSize: 13, storeSize: c.storeSize });

      // /readyz fails, naming the witness and the reason.
      const ready = await fetch(`${server.url}/readyz`);
      const report = (await ready.json()) as { failed: string[]; checks: { witnesses: { state: string; reason: string } } };
      expect([ready.status, report.failed]).toEqual([503, ['witnesses']]);
      expect(report.checks.witnesses.reason).toContain(`witness w1.example holds a history of tally.example/desk/${sid} the store lost (${c.reason}: it holds size 13, the store ${c.storeSize} entries)`);

      // The metric, by reason.
      const metrics = await (await fetch(`${server.url}/metrics`, { headers: auditor })).text();
      expect(metrics).toMatch(new RegExp(`^tally_witness_conflicts_total\\{reason="${c.reason}"\\} 1\\b`, 'm'));

      // Refused before signing from now on: another size signs nothing more (the signing log does not grow).
      const logged = async (): Promise<number> => {
        const s = new SqliteStore(db);
        try {
          return (await s.signedCheckpoints(`tally.example/desk/${sid}`)).length;
        } finally {
          await s.close();
        }
      };
      const before = await logged();
      const again = await fetch(`${server.url}/sessions/${sid}/checkpoint?size=3`, { headers: auditor });
      expect(again.status).toBe(500);
      expect(((await again.json()) as { error: { message: string } }).error.message).toContain('TALLY_SIGN_WITNESS_CONFLICT');
      expect(await logged()).toBe(before);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
