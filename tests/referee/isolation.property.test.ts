/**
 * Two desks in one store whose agents have the SAME names (`alpha`, `beta`)
 * but different signers never affect each other: every entry each desk writes
 * while the two interleave — nonces (drawn from one small shared pool, so the
 * names and nonces collide all the time), judge-rate slots (max 2 per hour,
 * reached within a run) and tickets — is byte for byte the entry it writes
 * when it runs alone in a fresh store. With reservations keyed by name (the
 * release before signer keys), a nonce or rate slot one desk took blocked the
 * other's, and the property fails within the seed.
 */
import fc from 'fast-check';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/index.js';
import { KEY_ALPHA, KEY_BETA, KEY_STRANGER, alpha, beta, carry, frameTime, iso, openIntent, signed } from '../rules/fixtures.js';
import { Desk, KEY_OTHER, judgedMandate, localJudge, signSpecSync, unsignedSpec } from './fixtures.js';

const SEED = 0x1d3a7;
const stranger = privateKeyToAccount(KEY_STRANGER);
const other = privateKeyToAccount(KEY_OTHER);

/** Desk A: alpha = Anvil #0, beta = Anvil #1. Desk B: alpha = Anvil #2, beta = Anvil #7. Same names, other keys. */
const DESKS = [
  { name: 'iso-desk-a', agents: { alpha: alpha.address, beta: beta.address }, keys: { alpha: KEY_ALPHA, beta: KEY_BETA } },
  { name: 'iso-desk-b', agents: { alpha: stranger.address, beta: other.address }, keys: { alpha: KEY_STRANGER, beta: KEY_OTHER } },
] as const;

interface Step {
  readonly desk: 0 | 1;
  readonly agent: 'alpha' | 'beta';
  readonly nonce: number;
  readonly side: 'long' | 'short';
}

const step: fc.Arbitrary<Step> = fc.record({
  desk: fc.constantFrom(0 as const, 1 as const),
  agent: fc.constantFrom('alpha' as const, 'beta' as const),
  nonce: fc.integer({ min: 1, max: 4 }),
  side: fc.constantFrom('long' as const, 'long' as const, 'short' as const),
});

const mandate = judgedMandate({ judge_rate: { max: 2, window_ms: 3_600_000 }, tx_cap: 50, quota: { cap: '100' } });
const specOf = (d: 0 | 1) => signSpecSync({ ...unsignedSpec(DESKS[d].name, mandate), agents: DESKS[d].agents }); // the principal signs the spec with its agents

async function body(desk: Desk, d: 0 | 1, s: Step): Promise<Uint8Array> {
  const u = openIntent({ agent_id: s.agent, nonce: `n${s.nonce}`, side: s.side, ttl: iso(frameTime(desk.ordinal) + 1_800_000) });
  return carry(await signed(u, DESKS[d].keys[s.agent]), 'ok');
}

async function entries(desk: Desk): Promise<string[]> {
  const out: string[] = [];
  for await (const l of desk.engine.exportEntries(desk.sid)) out.push(new TextDecoder().decode(l));
  return out;
}

/** Runs `steps` (each desk's own steps, in order) on desks sharing `store`, or each alone. */
async function run(steps: readonly Step[], shared: boolean): Promise<string[][]> {
  const one = new MemoryStore();
  const desks = [
    await Desk.open(specOf(0), { store: shared ? one : new MemoryStore(), judge: localJudge() }),
    await Desk.open(specOf(1), { store: shared ? one : new MemoryStore(), judge: localJudge() }),
  ];
  for (const s of steps) await desks[s.desk]!.answer(await body(desks[s.desk]!, s.desk, s));
  return Promise.all(desks.map(entries));
}

describe('two desks, colliding agent names, different signers, one store', () => {
  it(`neither desk's nonces, judge-rate slots or tickets change anything the other writes (seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 10 }), async (steps) => {
        const together = await run(steps, true);
        const alone = await run(steps, false);
        expect(together).toEqual(alone);
      }),
      { seed: SEED, numRuns: 25, examples: [[[{ desk: 1, agent: 'alpha', nonce: 1, side: 'long' }, { desk: 0, agent: 'alpha', nonce: 1, side: 'long' }]]] },
    );
  }, 180_000);
});
