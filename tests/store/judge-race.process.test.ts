/**
 * A judge is a paid endpoint: several engine PROCESSES on one PostgreSQL
 * schema, each with its own session for the same wallets, race judge calls
 * to a real local judge HTTP server that counts what it is asked. The rate
 * slots and the intent's nonce are reserved in the store before the call,
 * so (round 0) with judge_rate.max 2 and four racers the judge is asked at
 * most twice and exactly two judgments are recorded, and (round 1) one intent
 * raced in all four sessions is asked once: one judgment, three
 * replayed_nonce. Without the reservation before the call every racer asked
 * (four calls in round 0, four for the one intent in round 1).
 */
import { createServer, type Server } from 'node:http';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_ALPHA, KEY_BETA, alpha, beta, carry, frameTime, iso, openIntent, signed } from '../rules/fixtures.js';
import { KEY_JUDGE, judgedMandate, signSpecSync } from '../referee/fixtures.js';
import { PG_URL, dropSchema, freshSchemaName, pgReady, warnIfSkipped } from './helpers/pg.js';
import { requireFreshDist, startWorker, type Worker } from './helpers/procs.js';

warnIfSkipped('judge-race.process.test.ts');
beforeAll(requireFreshDist);

const RACERS = 4;
const DELAY_MS = 300; // the judge is slow: every racer is in flight at once

let server: Server;
let judgeUrl = '';
const asked: string[] = []; // the action line of every call

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: Array<{ content: string }> };
      const action = (JSON.parse(body.messages[1]!.content) as { action: string }).action;
      asked.push(action);
      const content = JSON.stringify({ reason: 'Long BTC within every rule.', verdict: 'ALLOW', action });
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'race-model', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] }));
      }, DELAY_MS);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  judgeUrl = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/v1`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

interface Line { round: number; sid: string; index: number; source?: string; intent?: string; first?: { session: string } }

describe.skipIf(!pgReady)('judge calls bounded under concurrency (processes on one PostgreSQL schema)', () => {
  it(`${RACERS} processes: never more judge calls than rate slots, and one call for an intent raced in every session`, async () => {
    const schema = freshSchemaName('judgerace');
    const workers: Worker[] = [];
    try {
      const mandate = { ...judgedMandate({ judge_rate: { max: 2, window_ms: 3_600_000 }, judges: [privateKeyToAccount(KEY_JUDGE).address] }), rules: ['Only long positions.'] };
      const ttl = iso(frameTime(0) + 1_800_000);
      // Round 0: each racer its own alpha intent (distinct nonces). Round 1: one beta intent, byte for byte the same everywhere.
      const own = await Promise.all(Array.from({ length: RACERS }, async (_, w) => new TextDecoder().decode(carry(await signed(openIntent({ agent_id: 'alpha', nonce: `race-${w}`, ttl }), KEY_ALPHA), 'ok'))));
      const shared = new TextDecoder().decode(carry(await signed(openIntent({ agent_id: 'beta', nonce: 'one-intent', ttl }), KEY_BETA), 'ok'));
      for (let w = 0; w < RACERS; w++) {
        const spec = signSpecSync({ name: `judge-race-${w}`, agents: { alpha: alpha.address, beta: beta.address }, intent: { maxTtlHorizonMs: 3_600_000 }, mandate }); // signed by its principal
        const rounds = [
          { ordinal: -1, time: frameTime(-1), text: own[w] },
          { ordinal: 0, time: frameTime(0), text: shared },
        ];
        workers.push(startWorker('judge-race.mjs', { url: PG_URL, schema, judgeUrl, judgeKey: KEY_JUDGE, spec, rounds }));
      }
      const exits = workers.map((w) => w.exited);
      let t0: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(workers.map((w) => w.until((l) => l.some((x) => x.includes('"ready"'))))),
        new Promise<never>((_, reject) => (t0 = setTimeout(() => void Promise.race([Promise.all(exits), Promise.resolve('running')]).then((e) => reject(new Error(`not ready: ${JSON.stringify(e)} ${JSON.stringify(workers.map((w) => w.lines))}`))), 30_000))),
      ]).finally(() => clearTimeout(t0));
      const round = async (n: number): Promise<Line[]> => {
        for (const w of workers) w.child.stdin.write(`${n}\n`);
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`round ${n} did not finish: ${JSON.stringify(workers.map((w) => w.lines))}`)), 60_000)));
        await Promise.race([Promise.all(workers.map((w) => w.until((l) => l.some((x) => x.includes(`"round":${n}`))))), late]).finally(() => clearTimeout(timer));
        return workers.map((w) => JSON.parse(w.lines.find((x) => x.includes(`"round":${n}`))!) as Line);
      };
      const r0 = await round(0);
      const calls0 = asked.length;
      expect(r0.map((l) => l.source).sort(), JSON.stringify(r0)).toEqual(['judged', 'judged', 'limited', 'limited']);
      expect(calls0).toBeLessThanOrEqual(2);
      expect(calls0).toBe(2);
      const r1 = await round(1);
      const calls1 = asked.length - calls0;
      expect(calls1, asked.join('\n')).toBe(1);
      const judged = r1.filter((l) => l.source === 'judged');
      expect(judged).toHaveLength(1);
      const others = r1.filter((l) => l.source !== 'judged');
      expect(others.map((l) => l.intent)).toEqual(['replayed_nonce', 'replayed_nonce', 'replayed_nonce']);
      for (const o of others) expect(o.first?.session).toBe(judged[0]!.sid);
      for (const w of workers) w.child.stdin.write('exit\n');
      for (const e of await Promise.all(workers.map((w) => w.exited))) expect(e, e.stderr).toMatchObject({ code: 0 });
    } finally {
      for (const w of workers) if (w.child.exitCode === null) w.child.kill();
      await dropSchema(schema);
    }
  }, 120_000);
});
