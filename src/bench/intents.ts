/**
 * Intent benchmark (issue: intents): signed-Intent turns validated per second
 * THROUGH THE SESSION — `createEngine()` sessions running concurrently, every
 * turn carrying a signed Intent from a registered agent and ruled on at append
 * — beside viem's `recoverMessageAddress` per second over the same kind of
 * payloads, measured in the same run. Two session figures: the intent ruler on
 * a worker pool, and on this thread with its cached signer keys.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { recoverMessageAddress } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createEngine } from '../engine.js';
import { canonicalPayload, signIntent, type Intent } from '../intent/index.js';
import { createIntentPool } from '../intent/pool.js';
import { toHex } from '../protocol/hex.js';
import { createIntentRuler } from '../rules/index.js';
import type { TurnRuler } from '../session/index.js';
import type { Figure } from './core.js';

/** Options of {@link benchIntentSessions}. */
export interface BenchIntentOptions {
  /** Concurrent sessions, one registered agent each (default 8). */
  readonly sessions?: number;
  /** Timed intent turns per session (default 80). */
  readonly turnsPerSession?: number;
  /** Worker threads of the pool (default: the machine's parallelism). */
  readonly workers?: number;
}

const T0 = 1_893_456_000_000; // 2030-01-01: frame times (the validator's "now")
const FAR_TTL = '2100-01-01T00:00:00Z';
const enc = new TextEncoder();

function rate(n: number, ms: number): number {
  return Math.round((n / ms) * 1000);
}

// Deterministic bench keys (never hold value): keccak256("tally-bench-agent-<i>").
function agentKey(i: number): `0x${string}` {
  return `0x${toHex(keccak_256(enc.encode(`tally-bench-agent-${i}`)))}`;
}

async function signedTurns(account: PrivateKeyAccount, agent: string, tag: string, n: number): Promise<Intent[]> {
  const out: Intent[] = [];
  for (let i = 0; i < n; i++) {
    out.push(await signIntent({ action: 'open', agent_id: agent, nonce: `${tag}-${i}`, ttl: FAR_TTL, size: `${1 + i}.25`, market: 'BTC-PERP', side: 'long', leverage: '3', max_slippage: '0.005' }, account));
  }
  return out;
}

/** Runs every session's turns concurrently through one engine; returns ms. Throws unless every turn is admitted. */
async function runSessions(ruler: TurnRuler, name: string, agents: Record<string, string>, perSession: readonly Intent[][]): Promise<number> {
  const engine = createEngine({ ruler });
  const t0 = performance.now();
  await Promise.all(
    perSession.map(async (intents, s) => {
      const open = await engine.open({ name: `${name}-${s}`, agents });
      if (!open.ok) throw new Error(open.message);
      for (let i = 0; i < intents.length; i++) {
        const ord = i - 1;
        const f = await engine.frame({ sessionId: open.sessionId, ordinal: ord, time: T0 + i * 1000 });
        if (!f.ok) throw new Error(f.message);
        const bytes = enc.encode(JSON.stringify({ intent: intents[i], context: 'bench' }));
        const t = await engine.turn({ sessionId: open.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes } });
        if (!t.ok) throw new Error(t.message);
        const ruling = (t.ruling as { intent?: { admitted?: boolean; code?: string } } | undefined)?.intent;
        if (ruling?.admitted !== true) throw new Error(`bench intent was not admitted: ${ruling?.code ?? 'no ruling'}`);
      }
    }),
  );
  return performance.now() - t0;
}

/**
 * Signs the Intents, measures the viem baseline, warms both rulers (their
 * signer caches), then times the concurrent sessions.
 *
 * @example
 * const figures = await benchIntentSessions({ sessions: 8, turnsPerSession: 50 });
 */
export async function benchIntentSessions(options: BenchIntentOptions = {}): Promise<Figure[]> {
  const sessions = options.sessions ?? 8;
  const per = options.turnsPerSession ?? 80;
  const accounts = Array.from({ length: sessions }, (_, i) => privateKeyToAccount(agentKey(i)));
  const agents: Record<string, string> = {};
  accounts.forEach((a, i) => (agents[`agent-${i}`] = a.address));
  const warm = await Promise.all(accounts.map((a, i) => signedTurns(a, `agent-${i}`, 'warm', 6)));
  const timedPool = await Promise.all(accounts.map((a, i) => signedTurns(a, `agent-${i}`, 'pool', per)));
  const timedLocal = await Promise.all(accounts.map((a, i) => signedTurns(a, `agent-${i}`, 'local', per)));

  // Baseline: recover the signer of every timed payload of the pool run.
  const all = timedPool.flat();
  const payloads = all.map((x) => canonicalPayload(x));
  const tb = performance.now();
  for (let i = 0; i < all.length; i++) {
    const who = await recoverMessageAddress({ message: payloads[i]!, signature: all[i]!.signature as `0x${string}` });
    if (who !== accounts[Math.floor(i / per)]!.address) throw new Error('baseline recovery returned the wrong signer');
  }
  const baseline = rate(all.length, performance.now() - tb);

  const pool = createIntentPool(options.workers === undefined ? {} : { workers: options.workers });
  try {
    const pooled = createIntentRuler({ pool });
    const local = createIntentRuler();
    await runSessions(pooled, 'bench-intents-warm-pool', agents, warm);
    await runSessions(local, 'bench-intents-warm-local', agents, warm);
    const poolMs = await runSessions(pooled, 'bench-intents-pool', agents, timedPool);
    const localMs = await runSessions(local, 'bench-intents-local', agents, timedLocal);
    const n = sessions * per;
    const poolRate = rate(n, poolMs);
    const localRate = rate(n, localMs);
    return [
      {
        name: `intent turns through ${sessions} concurrent sessions (worker pool, ${pool.size} workers)`,
        perSecond: poolRate,
        baselineName: 'viem recoverMessageAddress',
        baselinePerSecond: baseline,
        ratio: poolRate / baseline,
        note: 'aim: ratio >= 3; frames included',
      },
      {
        name: `intent turns through ${sessions} concurrent sessions (this thread, cached keys)`,
        perSecond: localRate,
        baselineName: 'viem recoverMessageAddress',
        baselinePerSecond: baseline,
        ratio: localRate / baseline,
        note: 'frames included',
      },
    ];
  } finally {
    await pool.close();
  }
}
