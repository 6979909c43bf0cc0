/**
 * Referee benchmark: intent-carrying turns per second through the referee
 * ruler (policy, local judge with three rules, ticket), and through panels of
 * 1 and 3 local judges in quorum, beside the same signed Intents through the
 * intent ruler alone, measured in the same run.
 */
import { privateKeyToAccount } from 'viem/accounts';
import { signIntent, type Intent } from '../intent/index.js';
import { LOCAL_JUDGE_MODEL, createLocalJudge, createRefereeRuler, signMandateWithKey } from '../referee/index.js';
import { createIntentRuler } from '../rules/index.js';
import { Engine, type TurnRuler } from '../session/index.js';
import { MemoryStore } from '../store/memory.js';
import type { Figure } from './core.js';

// Anvil test accounts — public, well-known keys; never hold value.
const AGENT_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const AGENT = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const JUDGE_KEY = '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e';
const JUDGE = '0x976EA74026E726554dB657fA54763abd0C3a0aa9';
const T0 = 4_102_444_800_000; // 2100-01-01

async function timeTurns(ruler: (store: MemoryStore) => TurnRuler, spec: Record<string, unknown>, intents: readonly Intent[]): Promise<{ ms: number; admitted: number }> {
  const store = new MemoryStore();
  const engine = new Engine({ store, ruler: ruler(store) });
  const open = await engine.open(spec);
  if (!open.ok) throw new Error(open.message);
  const enc = new TextEncoder();
  let ms = 0;
  let admitted = 0;
  for (let i = 0; i < intents.length; i++) {
    const ord = i - 1;
    const f = await engine.frame({ sessionId: open.sessionId, ordinal: ord, time: T0 + i * 1000 });
    if (!f.ok) throw new Error(f.message);
    const bytes = enc.encode(JSON.stringify({ intent: intents[i], context: 'bench: trend up' }));
    const t0 = performance.now();
    const t = await engine.turn({ sessionId: open.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes } });
    ms += performance.now() - t0;
    if (!t.ok) throw new Error(t.message);
    const r = t.ruling as { ticket?: unknown; intent?: { admitted?: boolean } } | undefined;
    if (r?.ticket !== undefined || (r?.intent?.admitted === true && !('policy' in r))) admitted++;
  }
  return { ms, admitted };
}

/**
 * Runs the referee benchmark over `n` distinct signed Intents; throws if any is not admitted.
 *
 * @example
 * const figures = await benchReferee(300);
 */
export async function benchReferee(n = 500): Promise<Figure[]> {
  const intents: Intent[] = [];
  for (let i = 0; i < n; i++) {
    intents.push(await signIntent({ action: 'open', agent_id: 'a', nonce: `b${i}`, ttl: '2100-01-02T00:00:00Z', size: '1', market: 'BTC-PERP', side: 'long', leverage: '2', max_slippage: '0.01' }, AGENT_KEY));
  }
  const base = { name: 'bench-referee', agents: { a: AGENT } };
  const mandate = {
    version: 2,
    instance: 'bench',
    principal: JUDGE,
    operator: JUDGE,
    executor: JUDGE,
    actions: ['open'],
    markets: ['BTC-PERP'],
    caps: { size: '10', leverage: '10', slippage: '0.1' },
    quota: { cap: '1000000' },
    tx_cap: 1_000_000,
    starts_at: T0,
    expires_at: T0 + 86_400_000,
    rules: ['Only long positions.', 'Never trade ETH-PERP.', 'The context must not mention "rumor".'],
    judges: [JUDGE],
    judge_rate: { max: 10_000, window_ms: 3_600_000 },
  };
  const plain = await timeTurns(() => createIntentRuler(), base, intents);
  const judge = createLocalJudge({ key: JUDGE_KEY });
  const refereed = await timeTurns((store) => createRefereeRuler({ store, judge }), signMandateWithKey({ ...base, mandate }, JUDGE_KEY), intents);
  // Panels of 1 and 3 independent local judges (each its own key), quorum 1 and 2.
  const panelKeys = [JUDGE_KEY, `0x${'0b'.repeat(32)}`, `0x${'0c'.repeat(32)}`] as const;
  const panelRun = async (size: 1 | 3) => {
    const keys = panelKeys.slice(0, size);
    const { judges: _single, ...rest } = mandate;
    const panel = { judges: keys.map((k) => ({ signer: privateKeyToAccount(k).address, model: LOCAL_JUDGE_MODEL })), quorum: size === 1 ? 1 : 2 };
    const clients = keys.map((key) => createLocalJudge({ key }));
    return timeTurns((store) => createRefereeRuler({ store, panel: clients }), signMandateWithKey({ ...base, mandate: { ...rest, panel } }, JUDGE_KEY), intents);
  };
  const panel1 = await panelRun(1);
  const panel3 = await panelRun(3);
  for (const [name, r] of [['plain', plain], ['refereed', refereed], ['panel of 1', panel1], ['panel of 3', panel3]] as const) {
    if (r.admitted !== n) throw new Error(`bench: ${name} admitted ${r.admitted} of ${n}`);
  }
  const per = (ms: number) => Math.round((n / ms) * 1000);
  const panelFigure = (size: number, r: { ms: number }): Figure => ({
    name: `refereed intent turns, panel of ${size} local judge${size === 1 ? '' : 's'} (quorum ${size === 1 ? 1 : 2})`,
    perSecond: per(r.ms),
    baselineName: 'intent-ruled turns',
    baselinePerSecond: per(plain.ms),
    ratio: per(r.ms) / per(plain.ms),
    note: `${n} turns; ${size} signed answer${size === 1 ? '' : 's'} per turn, asked in parallel`,
  });
  return [
    {
      name: 'refereed intent turns (policy + local judge + ticket)',
      perSecond: per(refereed.ms),
      baselineName: 'intent-ruled turns',
      baselinePerSecond: per(plain.ms),
      ratio: per(refereed.ms) / per(plain.ms),
      note: `${n} turns; the local judge signs one verdict per turn`,
    },
    panelFigure(1, panel1),
    panelFigure(3, panel3),
  ];
}
