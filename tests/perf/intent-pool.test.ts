/**
 * The intent ruler on a worker pool (createIntentRuler({ pool }), dist/)
 * against the single-thread ruler: the same turns give the same rulings and
 * byte-identical transcripts, for random mixes of valid, forged, replayed,
 * expired, malformed and plain turns across sessions; and concurrent
 * sessions on the pool give the transcripts the sequential ruler gives.
 */
import fc from 'fast-check';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireFreshDist } from './helpers/dist.js';

requireFreshDist(['protocol', 'codec', 'session', 'store', 'intent', 'rules']);
const { createEngine } = await import('../../dist/engine.js');
const { createIntentRuler } = await import('../../dist/rules/index.js');
const { createIntentPool } = await import('../../dist/intent/pool.js');
const { signIntent } = await import('../../dist/intent/index.js');
type Engine = ReturnType<typeof createEngine>;

const KEY_ALPHA = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const; // Anvil #0
const KEY_BETA = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const; // Anvil #1
const KEY_STRANGER = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a' as const; // Anvil #2
const alpha = privateKeyToAccount(KEY_ALPHA);
const beta = privateKeyToAccount(KEY_BETA);
const T0 = 1_893_456_000_000;
const frameTime = (ordinal: number) => T0 + (ordinal + 1) * 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const enc = new TextEncoder();
const carry = (intent: unknown) => enc.encode(JSON.stringify({ intent }));
// `__proto__` as an agent id: an own member only when built by JSON.parse, as here.
const agents = JSON.parse(`{"alpha":"${alpha.address}","beta":"${beta.address}","__proto__":"${beta.address}"}`) as Record<string, string>;
const spec = (name: string) => ({ name, agents, intent: { maxTtlHorizonMs: 86_400_000 } });

let pool: Awaited<ReturnType<typeof createIntentPool>>;
/** Authored bodies: valid and invalid intents of every kind, plain turns. */
const BODIES: Uint8Array[] = [];

beforeAll(async () => {
  pool = createIntentPool({ workers: 2 });
  const open = (agent: string, nonce: number, over: Record<string, unknown> = {}) => ({
    action: 'open', agent_id: agent, nonce, ttl: iso(T0 + 3_600_000), size: '1.5', market: 'BTC-PERP', side: 'long', leverage: '3', max_slippage: '0.01', ...over,
  });
  for (let n = 1; n <= 6; n++) {
    BODIES.push(carry(await signIntent(open('alpha', n) as never, KEY_ALPHA))); // valid; repeated picks replay the nonce
    BODIES.push(carry(await signIntent(open('beta', n) as never, KEY_BETA)));
  }
  BODIES.push(carry(await signIntent(open('__proto__', 9) as never, KEY_BETA))); // registered under a hostile id
  BODIES.push(carry(await signIntent(open('alpha', 7) as never, KEY_STRANGER))); // forged
  BODIES.push(carry(await signIntent(open('gamma', 7) as never, KEY_STRANGER))); // unknown agent
  BODIES.push(carry(await signIntent(open('alpha', 8, { ttl: iso(T0 - 86_400_000) }) as never, KEY_ALPHA))); // expired
  BODIES.push(carry(await signIntent(open('alpha', 10, { ttl: iso(T0 + 30 * 86_400_000) }) as never, KEY_ALPHA))); // too far
  BODIES.push(carry(await signIntent(open('beta', 11, { size: '0' }) as never, KEY_BETA))); // bounds
  const tampered = (await signIntent(open('beta', 12) as never, KEY_BETA)) as Record<string, unknown>;
  BODIES.push(carry({ ...tampered, size: '2' })); // bad signature
  BODIES.push(carry({ action: 'open', agent_id: 'alpha' })); // schema
  BODIES.push(enc.encode('{"intent": 5}'));
  BODIES.push(enc.encode('not json at all'));
  BODIES.push(enc.encode('{"note":"plain turn"}'));
}, 60_000);

afterAll(async () => {
  await pool.close();
});

class Day {
  ordinal = -1;
  private constructor(readonly engine: Engine, readonly sid: string) {}
  static async open(engine: Engine, name: string): Promise<Day> {
    const o = await engine.open(spec(name));
    if (!o.ok) throw new Error(o.message);
    return new Day(engine, o.sessionId);
  }
  async answer(bytes: Uint8Array) {
    const ord = this.ordinal++;
    const f = await this.engine.frame({ sessionId: this.sid, ordinal: ord, time: frameTime(ord) });
    if (!f.ok) throw new Error(f.message);
    return this.engine.turn({ sessionId: this.sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes } });
  }
  async bundle(): Promise<string> {
    const parts: string[] = [];
    for await (const l of this.engine.exportEntries(this.sid)) parts.push(Buffer.from(l).toString('utf8'));
    return parts.join('\n');
  }
}

describe('intent ruler on a worker pool', () => {
  it('rules exactly as the single-thread ruler, turn by turn (seed 0x1e7a)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.nat({ max: 2 }), fc.nat({ max: 99 })), { minLength: 1, maxLength: 24 }), fc.nat(), async (moves, run) => {
        const seq = createEngine({ ruler: createIntentRuler() });
        const par = createEngine({ ruler: createIntentRuler({ pool }) });
        const names = [0, 1, 2].map((i) => `pool-${run}-${i}`);
        const a = await Promise.all(names.map((n) => Day.open(seq, n)));
        const b = await Promise.all(names.map((n) => Day.open(par, n)));
        for (const [s, m] of moves) {
          const body = BODIES[m % BODIES.length]!;
          expect(await b[s]!.answer(body)).toEqual(await a[s]!.answer(body));
        }
        for (let i = 0; i < 3; i++) expect(await b[i]!.bundle()).toBe(await a[i]!.bundle());
      }),
      { seed: 0x1e7a, numRuns: 25 },
    );
  }, 60_000);

  it('concurrent sessions on the pool write the transcripts the sequential ruler writes', async () => {
    const seq = createEngine({ ruler: createIntentRuler() });
    const par = createEngine({ ruler: createIntentRuler({ pool }) });
    // Session i answers with the bodies i, i+4, i+8, …: no nonce is shared between sessions.
    const plan = (i: number) => BODIES.filter((_, k) => k % 4 === i && k < 12);
    const a = await Promise.all([0, 1, 2, 3].map((i) => Day.open(seq, `conc-${i}`)));
    const b = await Promise.all([0, 1, 2, 3].map((i) => Day.open(par, `conc-${i}`)));
    for (let i = 0; i < 4; i++) for (const body of plan(i)) await a[i]!.answer(body);
    await Promise.all(b.map(async (d, i) => {
      for (const body of plan(i)) await d.answer(body);
    }));
    for (let i = 0; i < 4; i++) expect(await b[i]!.bundle()).toBe(await a[i]!.bundle());
  }, 60_000);

  it('racing sessions on the pool admit a shared nonce exactly once', async () => {
    const par = createEngine({ ruler: createIntentRuler({ pool }) });
    const days = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => Day.open(par, `race-${i}`)));
    const results = await Promise.all(days.map((d) => d.answer(BODIES[0]!)));
    const admitted = results.filter((r) => r.ok && (r.ruling as { intent: { admitted: boolean } }).intent.admitted);
    expect(admitted).toHaveLength(1);
    for (const r of results) if (r.ok && !(r.ruling as { intent: { admitted: boolean } }).intent.admitted) expect((r.ruling as { intent: { code: string } }).intent.code).toBe('replayed_nonce');
  }, 60_000);
});
