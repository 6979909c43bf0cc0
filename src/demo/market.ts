/**
 * The seeded market simulator: two perpetual markets whose prices move by a
 * bounded random walk with slowly changing drift, on simulated time (a
 * seed-derived start day plus a fixed step per wake — never the wall clock).
 * Prices are integer ticks; every value that reaches a frame is a decimal
 * string built from integers, so the frames are identical on every machine.
 */
import type { CanonicalObject, CanonicalValue } from '../protocol/index.js';
import { createRng, type Rng } from './prng.js';

/** One simulated market. */
export interface MarketDef {
  readonly symbol: string;
  /** Decimal places of one tick. */
  readonly decimals: number;
  /** Range of the seeded start price, in ticks. */
  readonly startTicks: readonly [number, number];
}

/** The demo's markets. */
export const DEMO_MARKETS: readonly MarketDef[] = Object.freeze([
  Object.freeze({ symbol: 'BTC-PERP', decimals: 1, startTicks: [600_000, 700_000] as const }),
  Object.freeze({ symbol: 'ETH-PERP', decimals: 2, startTicks: [300_000, 400_000] as const }),
]);

/** 2030-01-01T00:00:00Z: the earliest simulated day. */
export const SIM_EPOCH_MS = 1_893_456_000_000;
/** Simulated time between wakes: 30 minutes (48 wakes make a day). */
export const WAKE_STEP_MS = 30 * 60_000;
const DAY_MS = 86_400_000;

/** An admitted order, and the fill the market reports for it in the next frame (with `price` for opens and closes). */
export interface Fill extends Order {
  readonly intent_hash: string;
}

/** An order the desk sends; the market fills it once its intent is admitted. */
export interface Order {
  readonly agent: string;
  readonly action: string;
  readonly size: string;
  readonly market?: string;
  readonly side?: string;
  readonly price?: string;
  readonly leverage?: string;
  readonly tp?: string;
  readonly sl?: string;
  readonly target?: string;
}

/** Formats integer ticks as a decimal string with `decimals` places. */
export function formatTicks(ticks: number, decimals: number): string {
  const neg = ticks < 0;
  const s = String(Math.abs(ticks)).padStart(decimals + 1, '0');
  const out = decimals === 0 ? s : `${s.slice(0, s.length - decimals)}.${s.slice(s.length - decimals)}`;
  return neg ? `-${out}` : out;
}

/** The simulator; one per demo day. */
export class MarketSim {
  /** Time of the OPEN frame (midnight UTC of a seed-chosen day). */
  readonly startTime: number;
  readonly stepMs = WAKE_STEP_MS;
  private readonly rng: Rng;
  private readonly ticks = new Map<string, number>();
  private drift = 0;

  constructor(seed: number) {
    this.rng = createRng(seed).fork('market');
    this.startTime = SIM_EPOCH_MS + this.rng.int(0, 3652) * DAY_MS;
    for (const m of DEMO_MARKETS) this.ticks.set(m.symbol, this.rng.int(m.startTicks[0], m.startTicks[1]));
  }

  /** Simulated time of the frame at `ordinal` (-1 is the OPEN frame). */
  timeOf(ordinal: number): number {
    return this.startTime + (ordinal + 1) * this.stepMs;
  }

  /** The current price of `symbol` in ticks. */
  priceTicks(symbol: string): number {
    return this.ticks.get(symbol) ?? 0;
  }

  /** The current price of `symbol` as a decimal string. */
  price(symbol: string): string {
    return formatTicks(this.priceTicks(symbol), defOf(symbol).decimals);
  }

  /** Prices of every market. */
  prices(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const m of DEMO_MARKETS) out[m.symbol] = this.price(m.symbol);
    return out;
  }

  /** Data of the OPEN frame: the desk, its markets and starting prices. */
  openData(agents: readonly { id: string; market: string }[], wakes: number): CanonicalObject {
    return {
      desk: 'tally-demo',
      wakes,
      step_ms: this.stepMs,
      markets: DEMO_MARKETS.map((m) => ({ symbol: m.symbol, tick: formatTicks(1, m.decimals), price: this.price(m.symbol) })),
      agents: agents.map((a) => ({ id: a.id, market: a.market })),
    };
  }

  /**
   * Moves prices one step, fills the orders admitted since the last frame at
   * the new prices, and returns the wake frame's data (prices, fills, runtime
   * notices, and the ticket transitions for the referee) with the fills.
   */
  wake(ordinal: number, orders: readonly Fill[], notices: readonly CanonicalObject[], referee?: CanonicalObject): { data: CanonicalObject; fills: Fill[] } {
    if (ordinal % 12 === 0) this.drift = this.rng.int(-8, 8);
    for (const m of DEMO_MARKETS) {
      const t = this.priceTicks(m.symbol);
      const bps = this.rng.int(-45, 45) + this.drift;
      this.ticks.set(m.symbol, Math.max(1, t + Math.round((t * bps) / 10_000)));
    }
    const fills = orders.map((o) => this.fill(o));
    const data: Record<string, CanonicalValue> = { prices: this.prices() };
    if (fills.length > 0) data['fills'] = fills as unknown as CanonicalValue;
    if (notices.length > 0) data['notices'] = notices as unknown as CanonicalValue;
    if (referee !== undefined) data['referee'] = referee;
    return { data, fills };
  }

  /** Fills one order: opens and closes trade at the current price moved against the taker by 0–3 ticks. */
  private fill(order: Fill): Fill {
    if ((order.action !== 'open' && order.action !== 'close') || order.market === undefined) return order;
    const t = this.priceTicks(order.market);
    const slip = this.rng.int(0, 3);
    // Opening a long or closing a short buys.
    const buying = (order.action === 'open') === (order.side === 'long');
    return { ...order, price: formatTicks(buying ? t + slip : Math.max(1, t - slip), defOf(order.market).decimals) };
  }
}

function defOf(symbol: string): MarketDef {
  return DEMO_MARKETS.find((m) => m.symbol === symbol) ?? (DEMO_MARKETS[0] as MarketDef);
}
