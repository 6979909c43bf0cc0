/** An engine wired with the referee ruler on one store (the ruler reads the transcript it rules on). */
import { Engine } from '../session/engine.js';
import { MemoryStore } from '../store/memory.js';
import type { TranscriptStore } from '../store/types.js';
import type { Judge } from './judge.js';
import { createRefereeRuler, type RefereeRuler } from './ruler.js';

/** Options of {@link createRefereeEngine}. */
export interface RefereeEngineOptions {
  /** Where transcripts live (default: a fresh memory store). */
  readonly store?: TranscriptStore;
  /** The judge for mandates with semantic rules. */
  readonly judge?: Judge;
  /** Judge clients for mandates with a panel (see `RefereeRulerOptions.panel`). */
  readonly panel?: readonly Judge[];
  /** Each panel judge's own timeout in ms. */
  readonly judgeTimeoutMs?: number;
}

/**
 * Creates an engine whose ruler is the referee (the intent ruler plus mandates, tickets and verdicts).
 *
 * @example
 * const { engine } = createRefereeEngine({ judge: createLocalJudge({ key }) });
 * await engine.open({ name: 'desk', agents: { alpha: '0x…' }, mandate: { … } });
 */
export function createRefereeEngine(options: RefereeEngineOptions = {}): { engine: Engine; ruler: RefereeRuler } {
  const store = options.store ?? new MemoryStore();
  const ruler = createRefereeRuler({
    store,
    ...(options.judge === undefined ? {} : { judge: options.judge }),
    ...(options.panel === undefined ? {} : { panel: options.panel }),
    ...(options.judgeTimeoutMs === undefined ? {} : { judgeTimeoutMs: options.judgeTimeoutMs }),
  });
  return { engine: new Engine({ store, ruler }), ruler };
}
