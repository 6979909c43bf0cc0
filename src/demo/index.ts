/**
 * `tally demo`: a deterministic, seeded agent-day — market simulator,
 * scripted agents (and their misbehaviour), the runner that records, seals,
 * exports, verifies, replays and proves it — and the bundle timeline that
 * `tally inspect` prints.
 */
export { runDemo, demoSpec, DEMO_PHASES, DEMO_VERSION, MAX_DEMO_WAKES } from './run.js';
export type { DemoOptions, DemoReport, DemoPhase, DemoRefereeSummary, Check } from './run.js';
export { demoMandate, demoRuler, demoQuotaCap, demoSizeCap, DEMO_RULES, DEMO_JUDGE_RATE } from './referee.js';
export { demoPanel, DEMO_JUDGES, DEMO_QUORUM, DEMO_JUDGE_TIMEOUT_MS, JUDGE_GLITCH, JUDGE_SLOW, JUDGE_WRONG_KEY } from './judges.js';
export type { DemoJudgeDef } from './judges.js';
export { TxBudget } from './budget.js';
export type { Pace } from './budget.js';
export { createRng, MAX_SEED } from './prng.js';
export type { Rng } from './prng.js';
export { MarketSim, DEMO_MARKETS, SIM_EPOCH_MS, WAKE_STEP_MS, formatTicks } from './market.js';
export type { Fill, Order, MarketDef } from './market.js';
export { DeskAgent } from './agent.js';
export type { Decision, Twist } from './agent.js';
export { DEMO_AGENTS, DEMO_PARTIES, INTRUDER, TREASURY_ADDRESS, OUTSIDER_ADDRESS, DEMO_ENGINE_NAME, demoEngineKey } from './keys.js';
export type { DemoAgent } from './keys.js';
export { TURN_ACTS, CLOSING_ACTS, CLOSING_MIN_WAKES, TX_ACTS, HEADROOM_ACTS, PROBES, LATE_PROBE, BLOCK_WAKES, planDay } from './script.js';
export type { TurnActDef, TurnActName, ProbeDef, ProbeName, DayPlan } from './script.js';
export { driveDay, encodeDecision, frameIndex, GHOST_SESSION_ID } from './driver.js';
export type { DriveOptions, DriveResult } from './driver.js';
export { readTimeline, rowOf, countRows, DayCounter } from './timeline.js';
export type { Timeline, TimelineRow, DayCounts, Notice, RulingView } from './timeline.js';
