/**
 * How fast hostile input is refused, beside ordinary input of the same kind
 * measured in the same run. These were wall-clock limits inside tests
 * (decimal bombs under 50 ms, hostile intents under 500 ms, a 1 MiB note
 * under 2 s); a test asserts what is refused, the bench prints how fast.
 */
import { canonicalDecimal, validateIntent, type ValidateIntentOptions } from '../intent/index.js';
import { generateEngineKey } from '../receipt/index.js';
import { openNote, signNote } from '../receipt/note/index.js';
import type { Figure } from './core.js';

/** Calls `fn` until `minMs` passed (at least `minCalls` times); calls per second. */
async function rate(fn: () => unknown, minMs: number, minCalls = 3): Promise<number> {
  let n = 0;
  const t0 = performance.now();
  while (n < minCalls || performance.now() - t0 < minMs) {
    await fn();
    n++;
  }
  return (n / (performance.now() - t0)) * 1000;
}

function figure(name: string, perSecond: number, baselineName: string, baselinePerSecond: number, note: string): Figure {
  return { name, perSecond: Math.round(perSecond * 100) / 100, baselineName, baselinePerSecond: Math.round(baselinePerSecond), ratio: perSecond / baselinePerSecond, note };
}

/**
 * Refusal rates of hostile decimals, intents and notes against ordinary ones.
 *
 * @example
 * for (const f of await benchHostile()) console.log(f.name, f.ratio);
 */
export async function benchHostile(options: { readonly minMs?: number } = {}): Promise<Figure[]> {
  const minMs = options.minMs ?? 300;
  const bombs = ['1e8000000', '1e-8000000', '0e99999999999999999999', `1e${'9'.repeat(90)}`, '9'.repeat(5_000_000), `1e${'9'.repeat(5_000_000)}`];
  const decimalBombs = await rate(() => bombs.forEach((b) => canonicalDecimal(b)), minMs);
  const decimalPlain = await rate(() => canonicalDecimal('97000.25'), minMs, 1000);

  const opts: ValidateIntentOptions = { resolveSigner: () => undefined, isNonceUsed: () => false, now: Date.UTC(2030, 0, 1) };
  const hostileIntent = { action: 'open', agent_id: 'alpha', nonce: 1, ttl: '2030-01-01T00:01:00Z', size: '9'.repeat(5_000_000), market: 'BTC-PERP', side: 'long', leverage: '3', max_slippage: '0.01' };
  const plainIntent = { ...hostileIntent, size: '1' };
  const intentHostile = await rate(() => validateIntent(hostileIntent, opts), minMs);
  const intentPlain = await rate(() => validateIntent(plainIntent, opts), minMs, 100);

  const key = generateEngineKey('bench.tally/hostile');
  const note = signNote('bench.tally/hostile\n1\nAAAA\n', [key]);
  const sig = note.slice(note.indexOf('\n\n') + 2);
  const huge = `${note}${sig.repeat(10_000)}`;
  const noteHuge = await rate(() => openNote(huge, [key.verifierKey]), minMs);
  const notePlain = await rate(() => openNote(note, [key.verifierKey]), minMs, 100);

  return [
    figure('decimal bomb sets refused (6 bombs, up to 5 MB each)', decimalBombs, 'ordinary decimals', decimalPlain, 'a set is 6 calls'),
    figure('hostile intents refused (5 MB size)', intentHostile, 'ordinary intents ruled', intentPlain, 'both invalid_schema; the ordinary one is a small unsigned intent'),
    figure(`notes of ${Math.round(huge.length / 1024)} KiB refused (too many signatures)`, noteHuge, 'one-signature notes opened', notePlain, 'too-many-signatures'),
  ];
}
