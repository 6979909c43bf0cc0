/** Shared fixtures for intents inside sessions. */
import { privateKeyToAccount } from 'viem/accounts';
import { signIntent, type UnsignedIntentInput } from '../../src/intent/index.js';
import { createEngine } from '../../src/engine.js';
import { nonceKey } from '../../src/rules/spec.js';
import type { Engine, TurnResult } from '../../src/session/index.js';

export const KEY_ALPHA = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const; // Anvil #0
export const KEY_BETA = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const; // Anvil #1
export const KEY_STRANGER = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a' as const; // Anvil #2
export const alpha = privateKeyToAccount(KEY_ALPHA);
export const beta = privateKeyToAccount(KEY_BETA);
/** The store keys of alpha's and beta's nonces (signer + name). */
export const ALPHA_NONCES = nonceKey(alpha.address, 'alpha');
export const BETA_NONCES = nonceKey(beta.address, 'beta');

/** Frame times: 2030-01-01T00:00:00Z plus one minute per ordinal. */
export const T0 = 1_893_456_000_000;
export const frameTime = (ordinal: number) => T0 + (ordinal + 1) * 60_000;
export const iso = (ms: number) => new Date(ms).toISOString();

export function spec(name = 'intent-day', extra: Record<string, unknown> = {}) {
  return { name, agents: { alpha: alpha.address, beta: beta.address }, intent: { maxTtlHorizonMs: 3_600_000 }, ...extra };
}

export function openIntent(over: Partial<Record<string, unknown>> = {}): UnsignedIntentInput {
  return { action: 'open', agent_id: 'alpha', nonce: 1, ttl: iso(frameTime(0) + 60_000), size: '1', market: 'BTC-PERP', side: 'long', leverage: '3', max_slippage: '0.01', ...over } as UnsignedIntentInput;
}

export async function signed(u: UnsignedIntentInput, key: `0x${string}` = KEY_ALPHA) {
  return signIntent(u, key);
}

export const enc = new TextEncoder();
export const carry = (intent: unknown, context?: string) => enc.encode(JSON.stringify(context === undefined ? { intent } : { intent, context }));

/** A session driven one wake at a time. */
export class Day {
  ordinal = -1;
  /** The last frame delivered (to build retries of its turn). */
  lastFrame: { ordinal: number; entryHash: string; frameRoot: string } | undefined;
  private constructor(readonly engine: Engine, readonly sid: string) {}

  static async open(engine: Engine = createEngine(), s: Record<string, unknown> = spec()): Promise<Day> {
    const o = await engine.open(s);
    if (!o.ok) throw new Error(o.message);
    return new Day(engine, o.sessionId);
  }

  /** Re-sends a turn for the last frame. */
  async resend(bytes: Uint8Array): Promise<TurnResult> {
    const f = this.lastFrame!;
    return this.engine.turn({ sessionId: this.sid, ordinal: f.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes } });
  }

  /** Delivers the next frame and answers it with `bytes`. */
  async answer(bytes: Uint8Array, time?: number): Promise<TurnResult & { ok: true }> {
    const ord = this.ordinal++;
    const f = await this.engine.frame({ sessionId: this.sid, ordinal: ord, time: time ?? frameTime(ord) });
    if (!f.ok) throw new Error(f.message);
    this.lastFrame = { ordinal: ord, entryHash: f.entryHash, frameRoot: f.frameRoot };
    const t = await this.engine.turn({ sessionId: this.sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes } });
    if (!t.ok) throw new Error(t.message);
    return t;
  }
}
