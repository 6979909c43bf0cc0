/** `agent-tally/rules`: what the engine rules on at append time (intents; the referee builds on it). */
export { createIntentRuler, ruleIntent, intentOfAuthored } from './intent.js';
export type { IntentRuling, IntentRulerOptions } from './intent.js';
export { checkIntentSpec, signerOf, intentOptionsOf, MAX_AGENTS } from './spec.js';
export type { IntentSpecOptions } from './spec.js';
