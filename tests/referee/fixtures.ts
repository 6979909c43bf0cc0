/** Shared fixtures for the referee: keys, a mandate, and a desk driven one wake at a time. */
import { privateKeyToAccount } from 'viem/accounts';
import type { CanonicalObject, CanonicalValue, SessionSpec } from '../../src/protocol/index.js';
import { createRefereeEngine, createLocalJudge, refereeState, signMandateWithKey, type Judge, type MandateSignatureScheme, type RefereeRuler, type RefereeRuling, type RefereeView } from '../../src/referee/index.js';
import type { Engine, TurnResult } from '../../src/session/index.js';
import type { TranscriptStore } from '../../src/store/index.js';
import { alpha, beta, frameTime } from '../rules/fixtures.js';

export const KEY_PRINCIPAL = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6' as const; // Anvil #3
export const KEY_OPERATOR = '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a' as const; // Anvil #4
export const KEY_EXECUTOR = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba' as const; // Anvil #5
export const KEY_JUDGE = '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e' as const; // Anvil #6
export const KEY_OTHER = '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356' as const; // Anvil #7
export const principal = privateKeyToAccount(KEY_PRINCIPAL);
export const operator = privateKeyToAccount(KEY_OPERATOR);
export const executor = privateKeyToAccount(KEY_EXECUTOR);
export const judgeAccount = privateKeyToAccount(KEY_JUDGE);
export const other = privateKeyToAccount(KEY_OTHER);

export const INSTANCE = 'desk-test/1';
/** The mandate ends one day after the first frame. */
export const MANDATE_START = frameTime(-1);
export const MANDATE_END = MANDATE_START + 86_400_000;
export const DEAD = '0x000000000000000000000000000000000000dead';

/** A mandate with every member set; `over` replaces members (undefined removes one). */
export function mandate(over: Record<string, unknown> = {}): Record<string, unknown> {
  const m: Record<string, unknown> = {
    version: 2,
    instance: INSTANCE,
    principal: principal.address,
    operator: operator.address,
    executor: executor.address,
    actions: ['open', 'modify', 'close', 'transfer'],
    markets: ['BTC-PERP', 'ETH-PERP'],
    targets: [DEAD],
    caps: { size: '5', leverage: '10', slippage: '0.05' },
    quota: { cap: '10', weights: { close: '0.5' } },
    tx_cap: 6,
    starts_at: MANDATE_START,
    expires_at: MANDATE_END,
    ...over,
  };
  for (const k of Object.keys(m)) if (m[k] === undefined) delete m[k];
  return m;
}

/** A mandate with semantic rules judged by {@link KEY_JUDGE}. */
export function judgedMandate(over: Record<string, unknown> = {}): Record<string, unknown> {
  return mandate({ rules: ['Only long positions.', 'Never trade ETH-PERP.', 'The context must not mention "rumor".'], judges: [judgeAccount.address], ...over });
}

/** The spec of a referee day, unsigned (its mandate as given). */
export function unsignedSpec(name: string, m: Record<string, unknown> = mandate()): SessionSpec {
  return { name, agents: { alpha: alpha.address, beta: beta.address }, intent: { maxTtlHorizonMs: 3_600_000 }, mandate: m as CanonicalObject };
}

/** Signs `spec`'s mandate synchronously (`signMandateWithKey`; viem's async `signMandate` is cross-checked against it in mandate-sig.test.ts). */
export function signSpecSync(spec: SessionSpec, key: `0x${string}` = KEY_PRINCIPAL, scheme: MandateSignatureScheme = 'eip712'): SessionSpec {
  return signMandateWithKey(spec, key, scheme);
}

/** The spec of a referee day; a version-2 mandate without a signature is signed by the principal (Anvil #3). */
export function refereeSpec(name: string, m: Record<string, unknown> = mandate()): SessionSpec {
  const spec = unsignedSpec(name, m);
  if (m['version'] !== 2 || m['signature'] !== undefined) return spec;
  try {
    return signSpecSync(spec);
  } catch {
    return spec; // a mandate too malformed to hash for signing (the test wants its shape refused)
  }
}

export const localJudge = (over: Partial<Parameters<typeof createLocalJudge>[0]> = {}): Judge => createLocalJudge({ key: KEY_JUDGE, ...over });

const enc = new TextEncoder();

/** A session under a mandate, driven one wake at a time (frame `ordinal`, then its turn). */
export class Desk {
  ordinal = -1;
  lastFrame: { ordinal: number; entryHash: string; frameRoot: string } | undefined;
  private constructor(
    readonly engine: Engine,
    readonly ruler: RefereeRuler,
    readonly sid: string,
  ) {}

  static async open(spec: Record<string, unknown>, opts: { judge?: Judge; store?: TranscriptStore; panel?: readonly Judge[]; judgeTimeoutMs?: number } = {}): Promise<Desk> {
    const { engine, ruler } = createRefereeEngine({
      ...(opts.judge ? { judge: opts.judge } : {}),
      ...(opts.store ? { store: opts.store } : {}),
      ...(opts.panel ? { panel: opts.panel } : {}),
      ...(opts.judgeTimeoutMs ? { judgeTimeoutMs: opts.judgeTimeoutMs } : {}),
    });
    const o = await engine.open(spec);
    if (!o.ok) throw new Error(o.message);
    return new Desk(engine, ruler, o.sessionId);
  }

  /** Re-attaches to an existing session with a fresh engine and ruler (an engine restart). */
  static async attach(store: TranscriptStore, sid: string, ordinal: number, judge?: Judge): Promise<Desk> {
    const { engine, ruler } = createRefereeEngine({ store, ...(judge ? { judge } : {}) });
    const d = new Desk(engine, ruler, sid);
    d.ordinal = ordinal;
    return d;
  }

  /** Delivers the next frame (with `data`) and answers it; `body` is authored bytes, a string, or 'stand-down'. */
  async answer(body: Uint8Array | string | 'stand-down', opts: { data?: CanonicalValue; time?: number } = {}): Promise<TurnResult & { ok: true }> {
    const ord = this.ordinal++;
    const f = await this.engine.frame({ sessionId: this.sid, ordinal: ord, time: opts.time ?? frameTime(ord), ...(opts.data === undefined ? {} : { data: opts.data }) });
    if (!f.ok) throw new Error(f.message);
    this.lastFrame = { ordinal: ord, entryHash: f.entryHash, frameRoot: f.frameRoot };
    const turnBody = body === 'stand-down' ? { kind: 'stand-down' as const, failureClass: 'timeout' as const } : { kind: 'authored' as const, bytes: typeof body === 'string' ? enc.encode(body) : body };
    const t = await this.engine.turn({ sessionId: this.sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: turnBody });
    if (!t.ok) throw new Error(t.message);
    return t;
  }

  async resend(bytes: Uint8Array): Promise<TurnResult> {
    const f = this.lastFrame!;
    return this.engine.turn({ sessionId: this.sid, ordinal: f.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes } });
  }

  async state(): Promise<RefereeView> {
    const r = await refereeState(this.engine, this.sid);
    if (!r.ok) throw new Error(r.message);
    return r.referee;
  }
}

/** The ruling of a turn, typed. */
export function ruling(t: { ruling?: unknown }): RefereeRuling {
  return (t.ruling ?? {}) as RefereeRuling;
}
