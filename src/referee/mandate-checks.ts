/**
 * The checks a mandate's members are read with ({@link attempt} runs one and
 * records its problems, so one pass reports them all), and the mandate's bounds.
 */
import { decDigits, isCanonicalDecimal } from './decimal.js';

/** Bounds of a mandate (the seed's, adapted to decimal figures and frame time). */
export const MANDATE_LIMITS = Object.freeze({
  /** Engine instance id: 1–64 characters of `[A-Za-z0-9._:/-]`. */
  instanceLength: 64,
  maxRules: 6,
  ruleLength: 800,
  maxMarkets: 32,
  maxTargets: 32,
  maxJudges: 8,
  /** Quota cap: at most 38 integer digits (< 10^38 < 2^128) and 18 fraction digits. */
  quotaIntegerDigits: 38,
  figureIntegerDigits: 18,
  figureFractionDigits: 18,
  maxTxCap: 1_000_000,
  minTicketTtlMs: 30_000,
  maxTicketTtlMs: 86_400_000,
  maxJudgeRate: 10_000,
  minJudgeWindowMs: 60_000,
  maxJudgeWindowMs: 86_400_000,
  /** Judge calls per UTC day of frame time across every agent and session of the store. */
  maxJudgeDaily: 1_000_000,
  /** Mandate lifetime `expires_at − starts_at` (seed 003: 60 s – 30 days). */
  minLifetimeMs: 60_000,
  maxLifetimeMs: 2_592_000_000,
});

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const ZERO = /^0x0{40}$/;

/** A failed check: `text` is the first problem (what fail-fast reported, and what a sealed ruling quotes), `all` every one found. */
export class Problem {
  constructor(
    readonly text: string,
    readonly all: readonly string[] = [text],
  ) {}
}
export const fail = (text: string): never => {
  throw new Problem(text);
};

/**
 * Runs one independent check, recording its problems and going on (undefined
 * when it failed), so one pass reports every problem. Checks run in the order
 * fail-fast ran them, so the first problem is the one it would have reported.
 */
export function attempt<T>(problems: string[], check: () => T): T | undefined {
  try {
    return check();
  } catch (e) {
    if (!(e instanceof Problem)) throw e;
    problems.push(...e.all);
    return undefined;
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function exactKeys(o: Record<string, unknown>, where: string, allowed: readonly string[], required: readonly string[]): void {
  const problems = [...Object.keys(o).filter((k) => !allowed.includes(k)).map((k) => `${where}: unknown member "${k}"`), ...required.filter((k) => !Object.hasOwn(o, k)).map((k) => `${where}.${k} is required`)];
  if (problems.length > 0) throw new Problem(problems[0]!, problems);
}

export function address(v: unknown, where: string): string {
  if (typeof v !== 'string' || !ADDRESS.test(v)) fail(`${where} must be a 0x-prefixed 20-byte hex address`);
  const a = (v as string).toLowerCase();
  if (ZERO.test(a)) fail(`${where} must not be the zero address`);
  return a;
}

export function list(v: unknown, where: string, min: number, max: number): unknown[] {
  if (!Array.isArray(v) || v.length < min || v.length > max) fail(`${where} must be a list of ${min}–${max} entries`);
  return v as unknown[];
}

export function unique(xs: readonly string[], where: string): void {
  if (new Set(xs).size !== xs.length) fail(`${where} has a duplicate entry`);
}

export function figure(v: unknown, where: string, opts: { positive: boolean; maxInteger: number }): string {
  if (!isCanonicalDecimal(v)) fail(`${where} must be a canonical decimal string such as "1.5" (no exponent, no trailing zeros)`);
  const d = v as string;
  if (d.startsWith('-')) fail(`${where} must not be negative`);
  if (opts.positive && d === '0') fail(`${where} must be greater than 0`);
  const digits = decDigits(d);
  if (digits.integer > opts.maxInteger) fail(`${where} has more than ${opts.maxInteger} integer digits`);
  if (digits.fraction > MANDATE_LIMITS.figureFractionDigits) fail(`${where} has more than ${MANDATE_LIMITS.figureFractionDigits} fraction digits`);
  return d;
}

export function intIn(v: unknown, where: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) fail(`${where} must be an integer from ${min} to ${max}`);
  return v as number;
}

export function text(v: unknown, where: string, max: number): string {
  if (typeof v !== 'string' || v.trim().length === 0 || v.length > max) fail(`${where} must be a non-blank string of at most ${max} characters`);
  return v as string;
}

/** The problems without those that only repeat a missing member ("x is required", then "x must be …"). */
export function withoutFollowOns(problems: readonly string[]): string[] {
  const missing = problems.filter((p) => p.endsWith(' is required')).map((p) => p.slice(0, -' is required'.length));
  return problems.filter((p) => p.endsWith(' is required') || !missing.some((m) => p.startsWith(`${m} `) || p.startsWith(`${m}[`) || p.startsWith(`${m}.`)));
}
