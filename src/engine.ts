/**
 * The package-root engine: the session controller with the intent ruler
 * plugged in by default, so every authored turn that carries a signed Intent
 * is ruled on and the ruling recorded.
 */
import { createIntentRuler } from './rules/index.js';
import { Engine, type EngineOptions } from './session/index.js';

/**
 * Creates an engine (memory store and intent ruler unless told otherwise).
 *
 * @example
 * import { createEngine } from 'agent-tally';
 * const engine = createEngine();
 * const open = await engine.open({ name: 'desk-1', day: '2026-11-30' });
 */
export function createEngine(options: EngineOptions = {}): Engine {
  return new Engine({ ...options, ruler: options.ruler ?? createIntentRuler() });
}
