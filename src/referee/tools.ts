/**
 * The mandate's `tools` section: which MCP tools an agent may call through the
 * gateway, on which upstream server, with which arguments, how often
 * (docs/PROTOCOL.md §18.3). Parsed as strictly as the rest of the mandate:
 * an unknown member anywhere fails, so a rule the referee does not know is
 * never silently ignored.
 *
 * ```json
 * "tools": {
 *   "allow": {
 *     "echo": {},
 *     "get-sum": { "server": "mcp-servers/everything", "args": { "a": { "type": "integer", "maximum": 100 } }, "required": ["a"] },
 *     "pay": { "args": { "amount": { "type": "decimal", "maximum": "10" }, "payee": { "enum": ["acme"] } }, "additional": false, "rate": { "max": 3, "window_ms": 60000 } }
 *   },
 *   "rate": { "max": 100, "window_ms": 60000 },
 *   "budgets": [{ "tools": ["pay", "tip"], "arg": "amount", "max": "25", "window_ms": 3600000 }]
 * }
 * ```
 *
 * A tool rule may also name judges, with the members a mandate or a payment policy uses
 * (`rules`, and `judges` or a `panel`, `judge_request?`, `judges_independent?`; judging.ts):
 *
 * ```json
 * "write_file": { "rules": ["never write outside /srv/notes"], "judges": ["0x…"] }
 * ```
 */
import { decAdd, decCmp, isCanonicalDecimal } from './decimal.js';
import { judgingOf, type Judging } from './judging.js';

/** Bounds of a tools section. */
export const TOOL_POLICY_LIMITS = Object.freeze({
  maxTools: 64,
  maxArgs: 32,
  maxEnum: 256,
  nameLength: 128,
  stringLength: 1024,
  maxRate: 1_000_000,
  minWindowMs: 1_000,
  maxWindowMs: 86_400_000,
});

/** A constraint on one argument. */
export interface ArgRule {
  readonly type: 'string' | 'integer' | 'decimal' | 'boolean' | undefined;
  readonly enum: readonly (string | number | boolean)[] | undefined;
  /** Canonical decimal strings (for `integer`, integers written as decimals). */
  readonly minimum: string | undefined;
  readonly maximum: string | undefined;
  readonly maxLength: number | undefined;
}

/** A rate: at most `max` admitted calls per `windowMs` of frame time. */
export interface ToolRate {
  readonly max: number;
  readonly windowMs: number;
}

/** What the mandate allows for one tool. */
export interface ToolRule {
  readonly server: string | undefined;
  readonly args: Readonly<Record<string, ArgRule>>;
  readonly required: readonly string[];
  readonly additional: boolean;
  readonly rate: ToolRate | undefined;
  /** Argument name → the most its values may sum to over the day's admitted calls of this tool (canonical decimal). */
  readonly budget: Readonly<Record<string, string>>;
  /** The judges every call of this tool is put to once the mechanical checks admit it (§18.3 step 9); `undefined`: none. */
  readonly judging: Judging | undefined;
}

/** A budget over a group of tools: the values of `arg` over the admitted calls of `tools` (within `windowMs` of frame time, or the whole day) sum to at most `max`. */
export interface GroupBudget {
  readonly tools: readonly string[];
  readonly arg: string;
  /** Canonical decimal greater than 0. */
  readonly max: string;
  /** `undefined`: the whole day. */
  readonly windowMs: number | undefined;
}

/** A checked tools section. */
export interface ToolPolicy {
  readonly allow: ReadonlyMap<string, ToolRule>;
  readonly rate: ToolRate | undefined;
  /** Budgets over groups of tools, in the mandate's order. */
  readonly budgets: readonly GroupBudget[];
}

/** The judging members a tool rule may carry (checked by judging.ts, as a mandate's and a payment policy's). */
const JUDGING_MEMBERS = ['rules', 'judges', 'panel', 'judge_request', 'judges_independent'] as const;

/** The most group budgets a tools section may hold. */
const MAX_BUDGETS = 16;

const NAME = /^[\x21-\x7e]+$/;

class Problem {
  constructor(readonly text: string) {}
}
const fail = (text: string): never => {
  throw new Problem(text);
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function exact(o: Record<string, unknown>, where: string, allowed: readonly string[]): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) fail(`${where}: unknown member "${k}"`);
}

function intIn(v: unknown, where: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) fail(`${where} must be an integer from ${min} to ${max}`);
  return v as number;
}

function name(v: unknown, where: string): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > TOOL_POLICY_LIMITS.nameLength || !NAME.test(v)) fail(`${where} must be 1–${TOOL_POLICY_LIMITS.nameLength} printable ASCII characters without spaces`);
  return v as string;
}

function rate(v: unknown, where: string): ToolRate {
  if (!isObject(v)) fail(`${where} must be an object { max, window_ms }`);
  const o = v as Record<string, unknown>;
  exact(o, where, ['max', 'window_ms']);
  return { max: intIn(o['max'], `${where}.max`, 1, TOOL_POLICY_LIMITS.maxRate), windowMs: intIn(o['window_ms'], `${where}.window_ms`, TOOL_POLICY_LIMITS.minWindowMs, TOOL_POLICY_LIMITS.maxWindowMs) };
}

function bound(v: unknown, where: string, type: ArgRule['type']): string {
  if (type === 'integer') {
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) fail(`${where} must be an integer (the argument's type is integer)`);
    return String(v);
  }
  if (type === 'decimal') {
    if (!isCanonicalDecimal(v)) fail(`${where} must be a canonical decimal string such as "10" or "0.5"`);
    return v as string;
  }
  return fail(`${where} needs "type": "integer" or "decimal"`);
}

function argRule(v: unknown, where: string): ArgRule {
  if (!isObject(v)) fail(`${where} must be an object { type?, enum?, minimum?, maximum?, max_length? }`);
  const o = v as Record<string, unknown>;
  exact(o, where, ['type', 'enum', 'minimum', 'maximum', 'max_length']);
  const t = o['type'];
  if (t !== undefined && t !== 'string' && t !== 'integer' && t !== 'decimal' && t !== 'boolean') fail(`${where}.type must be "string", "integer", "decimal" or "boolean"`);
  const type = t as ArgRule['type'];
  let values: (string | number | boolean)[] | undefined;
  if (o['enum'] !== undefined) {
    const e = o['enum'];
    if (!Array.isArray(e) || e.length < 1 || e.length > TOOL_POLICY_LIMITS.maxEnum) fail(`${where}.enum must be a list of 1–${TOOL_POLICY_LIMITS.maxEnum} values`);
    values = (e as unknown[]).map((x, i) => {
      const ok = typeof x === 'string' ? x.length <= TOOL_POLICY_LIMITS.stringLength : typeof x === 'boolean' || (typeof x === 'number' && Number.isSafeInteger(x));
      if (!ok) fail(`${where}.enum[${i}] must be a string of at most ${TOOL_POLICY_LIMITS.stringLength} characters, an integer or a boolean`);
      if (type !== undefined && check({ type, enum: undefined, minimum: undefined, maximum: undefined, maxLength: undefined }, x) !== undefined) fail(`${where}.enum[${i}] is not of the argument's type ${type}`);
      return x as string | number | boolean;
    });
    if (new Set(values.map((x) => `${typeof x}:${String(x)}`)).size !== values.length) fail(`${where}.enum has a duplicate value`);
  }
  const minimum = o['minimum'] === undefined ? undefined : bound(o['minimum'], `${where}.minimum`, type);
  const maximum = o['maximum'] === undefined ? undefined : bound(o['maximum'], `${where}.maximum`, type);
  if (minimum !== undefined && maximum !== undefined && decCmp(minimum, maximum) > 0) fail(`${where}.minimum is above ${where}.maximum`);
  let maxLength: number | undefined;
  if (o['max_length'] !== undefined) {
    if (type !== 'string') fail(`${where}.max_length needs "type": "string"`);
    maxLength = intIn(o['max_length'], `${where}.max_length`, 0, 1_000_000);
  }
  if (type === undefined && values === undefined) fail(`${where} must give a type or an enum`);
  return { type, enum: values, minimum, maximum, maxLength };
}

function toolRule(v: unknown, where: string): ToolRule {
  if (!isObject(v)) fail(`${where} must be an object { server?, args?, required?, additional?, rate?, budget?, rules?, judges? | panel?, judge_request?, judges_independent? }`);
  const o = v as Record<string, unknown>;
  exact(o, where, ['server', 'args', 'required', 'additional', 'rate', 'budget', ...JUDGING_MEMBERS]);
  const args: Record<string, ArgRule> = {};
  if (o['args'] !== undefined) {
    if (!isObject(o['args'])) fail(`${where}.args must be an object of argument name → rule`);
    const entries = Object.entries(o['args'] as Record<string, unknown>);
    if (entries.length > TOOL_POLICY_LIMITS.maxArgs) fail(`${where}.args has more than ${TOOL_POLICY_LIMITS.maxArgs} arguments`);
    for (const [k, r] of entries) args[name(k, `${where}.args name`)] = argRule(r, `${where}.args.${k}`);
  }
  let required: string[] = [];
  if (o['required'] !== undefined) {
    const r = o['required'];
    if (!Array.isArray(r) || r.length > TOOL_POLICY_LIMITS.maxArgs) fail(`${where}.required must be a list of at most ${TOOL_POLICY_LIMITS.maxArgs} argument names`);
    required = (r as unknown[]).map((x, i) => name(x, `${where}.required[${i}]`));
    if (new Set(required).size !== required.length) fail(`${where}.required has a duplicate entry`);
  }
  if (o['additional'] !== undefined && typeof o['additional'] !== 'boolean') fail(`${where}.additional must be true or false`);
  const budget: Record<string, string> = {};
  if (o['budget'] !== undefined) {
    if (!isObject(o['budget'])) fail(`${where}.budget must be an object of argument name → the most its values may sum to`);
    for (const [k, cap] of Object.entries(o['budget'] as Record<string, unknown>)) {
      const t = args[k]?.type;
      if (t !== 'integer' && t !== 'decimal') fail(`${where}.budget.${k} needs ${where}.args.${k} with "type": "integer" or "decimal" (only figures are summed)`);
      if (!isCanonicalDecimal(cap) || decCmp(cap as string, '0') <= 0) fail(`${where}.budget.${k} must be a canonical decimal string greater than 0, such as "25"`);
      budget[k] = cap as string;
    }
  }
  const problems: string[] = [];
  const judging = judgingOf(o, where, 2, problems);
  if (problems.length > 0) fail(problems[0]!);
  return {
    budget,
    judging: judging === undefined || judging.rules.length === 0 ? undefined : judging,
    server: o['server'] === undefined ? undefined : name(o['server'], `${where}.server`),
    args,
    required,
    additional: o['additional'] !== false,
    rate: o['rate'] === undefined ? undefined : rate(o['rate'], `${where}.rate`),
  };
}

function groupBudgets(v: unknown, where: string, allow: ReadonlyMap<string, ToolRule>): GroupBudget[] {
  if (!Array.isArray(v) || v.length < 1 || v.length > MAX_BUDGETS) fail(`${where} must be a list of 1–${MAX_BUDGETS} budgets { tools, arg, max, window_ms? }`);
  return (v as unknown[]).map((b, i) => {
    const w = `${where}[${i}]`;
    if (!isObject(b)) fail(`${w} must be an object { tools, arg, max, window_ms? }`);
    const o = b as Record<string, unknown>;
    exact(o, w, ['tools', 'arg', 'max', 'window_ms']);
    for (const k of ['tools', 'arg', 'max']) if (o[k] === undefined) fail(`${w}.${k} is required`);
    const ts = o['tools'];
    if (!Array.isArray(ts) || ts.length < 1 || ts.length > TOOL_POLICY_LIMITS.maxTools) fail(`${w}.tools must be a list of 1–${TOOL_POLICY_LIMITS.maxTools} tool names`);
    const arg = name(o['arg'], `${w}.arg`);
    const tools = (ts as unknown[]).map((t, j) => {
      const tool = name(t, `${w}.tools[${j}]`);
      const r = allow.get(tool);
      if (r === undefined) fail(`${w}.tools[${j}]: "${tool}" is not in the allow list`);
      const type = r!.args[arg]?.type;
      if (type !== 'integer' && type !== 'decimal') fail(`${w} needs allow.${tool}.args.${arg} with "type": "integer" or "decimal" (only figures are summed)`);
      return tool;
    });
    if (new Set(tools).size !== tools.length) fail(`${w}.tools has a duplicate entry`);
    const max = o['max'];
    if (!isCanonicalDecimal(max) || decCmp(max as string, '0') <= 0) fail(`${w}.max must be a canonical decimal string greater than 0, such as "25"`);
    const windowMs = o['window_ms'] === undefined ? undefined : intIn(o['window_ms'], `${w}.window_ms`, TOOL_POLICY_LIMITS.minWindowMs, TOOL_POLICY_LIMITS.maxWindowMs);
    return { tools, arg, max: max as string, windowMs };
  });
}

/** Parses `mandate.tools`; throws a problem text (caught by the mandate parser) on anything not allowed. */
export function parseToolPolicy(v: unknown, where = 'spec.mandate.tools'): ToolPolicy {
  try {
    if (!isObject(v)) fail(`${where} must be an object { allow, rate?, budgets? }`);
    const o = v as Record<string, unknown>;
    exact(o, where, ['allow', 'rate', 'budgets']);
    if (!isObject(o['allow'])) fail(`${where}.allow must be an object of tool name → rule`);
    const entries = Object.entries(o['allow'] as Record<string, unknown>);
    if (entries.length > TOOL_POLICY_LIMITS.maxTools) fail(`${where}.allow has more than ${TOOL_POLICY_LIMITS.maxTools} tools`);
    const allow = new Map<string, ToolRule>();
    for (const [k, r] of entries) allow.set(name(k, `${where}.allow name`), toolRule(r, `${where}.allow.${k}`));
    const budgets = o['budgets'] === undefined ? [] : groupBudgets(o['budgets'], `${where}.budgets`, allow);
    return { allow, rate: o['rate'] === undefined ? undefined : rate(o['rate'], `${where}.rate`), budgets };
  } catch (e) {
    if (e instanceof Problem) throw new ToolPolicyProblem(e.text);
    throw e;
  }
}

/** A tools section the referee cannot use. */
export class ToolPolicyProblem extends Error {}

/** Why `value` breaks `rule` (a sentence), or `undefined` when it keeps it. */
export function check(rule: ArgRule, value: unknown): string | undefined {
  switch (rule.type) {
    case 'string':
      if (typeof value !== 'string') return 'must be a string';
      if (rule.maxLength !== undefined && value.length > rule.maxLength) return `must be at most ${rule.maxLength} characters`;
      break;
    case 'boolean':
      if (typeof value !== 'boolean') return 'must be true or false';
      break;
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) return 'must be an integer';
      break;
    case 'decimal':
      // Refuse, never repair: "1.50" or 1e3 is not read as a figure.
      if (!(typeof value === 'number' && Number.isSafeInteger(value)) && !isCanonicalDecimal(value)) return 'must be a canonical decimal string such as "2.5" (or an integer)';
      break;
    case undefined:
      break;
  }
  if (rule.enum !== undefined && !rule.enum.some((x) => x === value)) return `must be one of ${rule.enum.map((x) => JSON.stringify(x)).join(', ')}`.slice(0, 180);
  const figure = typeof value === 'number' ? String(value) : (value as string);
  if (rule.minimum !== undefined && decCmp(figure, rule.minimum) < 0) return `must be at least ${rule.minimum}`;
  if (rule.maximum !== undefined && decCmp(figure, rule.maximum) > 0) return `must be at most ${rule.maximum}`;
  return undefined;
}

/** Why `args` break `rule` (naming the argument), or `undefined`. */
export function checkArguments(rule: ToolRule, args: Readonly<Record<string, unknown>>): string | undefined {
  for (const k of rule.required) if (!Object.hasOwn(args, k)) return `argument "${k}" is required`;
  for (const [k, v] of Object.entries(args)) {
    const r = rule.args[k];
    if (r === undefined) {
      if (!rule.additional) return `argument "${k.slice(0, 64)}" is not allowed (the mandate lists this tool's arguments)`;
      continue;
    }
    const why = check(r, v);
    if (why !== undefined) return `argument "${k}" ${why}`;
  }
  return undefined;
}

/** The figure an argument value counts for in a budget (its checked type is integer or decimal), else `undefined`. */
export function budgetFigure(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return isCanonicalDecimal(value) ? value : undefined;
}

/** The first budget this call would overspend: `spent` is what the day's admitted calls of the tool already summed, per argument. */
export function overBudget(rule: ToolRule, args: Readonly<Record<string, unknown>>, spent: ReadonlyMap<string, string> | undefined): { readonly arg: string; readonly cap: string; readonly total: string } | undefined {
  for (const [arg, cap] of Object.entries(rule.budget)) {
    const here = budgetFigure(args[arg]) ?? '0';
    const total = decAdd(spent?.get(arg) ?? '0', here);
    if (decCmp(total, cap) > 0) return { arg, cap, total };
  }
  return undefined;
}

/** One admitted call as a budget counts it: its frame time, tool and figures (§18.3 step 8). */
export interface SpentCall {
  readonly time: number;
  readonly name: string;
  readonly args: Readonly<Record<string, unknown>>;
}
