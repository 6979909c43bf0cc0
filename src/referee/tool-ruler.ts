/**
 * Rulings on MCP tool calls (docs/PROTOCOL.md §18): in a gateway day (the
 * spec has an `mcp` member) every authored turn is one `tools/call` request,
 * ruled from the transcript alone — the mandate's `tools` section, the tools
 * the OPEN frame (or a later `tools` frame) recorded as offered, and the
 * earlier calls of the day (rates, request ids). The gateway sends a call
 * upstream only when this ruling admits it, and replay re-derives it.
 *
 * Ruling: `{"tool": {"stage":"tool","admitted":true,"name":…,"verdict"?:…}}` or
 * `{"tool": {"stage":"tool","admitted":false,"code":…,"message":…,"name"?:…,"verdict"?:…}}`;
 * `verdict` when the tool's rule names judges and they were asked (step 9).
 */
import { sha256 } from '../codec/sha256.js';
import { authoredHash, fromBase64, parseStrictJson, slotIndex, TallyError, toHex, tryCanonicalJson, type CanonicalObject, type Entry, type SessionSpec } from '../protocol/index.js';
import { isCanonicalParse } from '../protocol/canonical.js';
import type { RuleContext, RuleOutcome } from '../session/types.js';
import { TranscriptFolds, type EntrySource } from './transcript-folds.js';
import { mandateOf, type ParseMandateOptions } from './mandate.js';
import type { ToolCode } from './tool-codes.js';
import { GroupLedger, overGroupBudget } from './group-budget.js';
import { budgetFigure, checkArguments, overBudget, type SpentCall, type ToolRate, type ToolRule } from './tools.js';
import { actionLine, type JudgeRequestInput } from './bytes.js';
import { askJudges, reverifyJudges, type JudgedVerdict } from './ask-judges.js';
import type { Judge } from './judge.js';
import type { Judging } from './judging.js';
import { decAdd } from './decimal.js';
import { splitToolName, UPSTREAM_NAME } from './tool-names.js';

/** The `tool` member of a gateway ruling. */
export type ToolRuling =
  | { readonly stage: 'tool'; readonly admitted: true; readonly name: string; readonly verdict?: JudgedVerdict }
  | { readonly stage: 'tool'; readonly admitted: false; readonly code: ToolCode; readonly message: string; readonly name?: string; readonly verdict?: JudgedVerdict };

/** The judge clients a live gateway asks (a replay asks none: it re-verifies the recorded verdict). */
export interface ToolJudges {
  readonly clients: readonly Judge[];
  readonly timeoutMs: number;
}

/** The `action` field of a tool call's action line and judge request. */
export const TOOL_JUDGE_ACTION = 'mcp-tool-call';

/** A `tools/call` request as the turn carries it. */
export interface ToolCall {
  readonly id: string | number;
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/** The authored bytes of the turn that ends a gateway day (no ruling): `{"close":<reason>}`. */
export const CLOSE_REASONS = ['agent-disconnected', 'signal', 'upstream-exited'] as const;

const MCP_KEYS = ['upstream', 'run'];
const turnDecoder = new TextDecoder();

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** True when the spec seals a gateway day (its `mcp` member is present). */
export function isGatewaySpec(spec: SessionSpec): boolean {
  return spec['mcp'] !== undefined;
}

/** Checks `spec.mcp` at open: an object of at most `upstream` and `run`, each a string of 1–200 characters. */
export function checkGatewaySpec(spec: SessionSpec): string | undefined {
  const m = spec['mcp'];
  if (m === undefined) return undefined;
  if (!isObject(m)) return 'spec.mcp must be an object { upstream?, run? }';
  for (const k of Object.keys(m)) if (!MCP_KEYS.includes(k)) return `spec.mcp: unknown member "${k}"`;
  for (const k of MCP_KEYS) {
    const v = m[k];
    if (v !== undefined && (typeof v !== 'string' || v.length === 0 || v.length > 200)) return `spec.mcp.${k} must be a string of 1–200 characters`;
  }
  return undefined;
}

/** What a gateway turn's authored bytes are. */
export type GatewayTurn =
  | { readonly kind: 'call'; readonly call: ToolCall }
  | { readonly kind: 'close' }
  | { readonly kind: 'refused'; readonly code: 'tool_call_malformed' | 'tool_call_not_canonical'; readonly message: string; readonly id?: string | number };

/** Reads a gateway turn's bytes: strict JSON, canonical, a JSON-RPC `tools/call` request (or the closing turn). */
export function readGatewayTurn(authored: Uint8Array): GatewayTurn {
  const p = parseStrictJson(authored);
  if (!p.ok) return { kind: 'refused', code: p.code === 'invalid-utf8' || p.code === 'syntax' || p.code === 'trailing-data' ? 'tool_call_malformed' : 'tool_call_not_canonical', message: `the request is not strict JSON (${p.code})` };
  const v = p.value;
  const text = turnDecoder.decode(authored);
  const idOf = isObject(v) && (typeof v['id'] === 'string' || (typeof v['id'] === 'number' && Number.isSafeInteger(v['id']))) ? { id: v['id'] as string | number } : {};
  if (!isCanonicalParse(v, text) && !canonicalEquals(v, text)) return { kind: 'refused', code: 'tool_call_not_canonical', message: 'the request bytes are not canonical JSON (fractional numbers, null or unsorted keys)', ...idOf };
  if (isObject(v) && Object.keys(v).length === 1 && typeof v['close'] === 'string' && (CLOSE_REASONS as readonly string[]).includes(v['close'])) return { kind: 'close' };
  const bad = (message: string): GatewayTurn => ({ kind: 'refused', code: 'tool_call_malformed', message, ...idOf });
  if (!isObject(v) || v['jsonrpc'] !== '2.0' || v['method'] !== 'tools/call') return bad('the turn is not a JSON-RPC 2.0 tools/call request');
  for (const k of Object.keys(v)) if (!['jsonrpc', 'id', 'method', 'params'].includes(k)) return bad(`the request has an unknown member "${k.slice(0, 64)}"`);
  if (idOf.id === undefined) return bad('the request id must be a string or an integer');
  const params = v['params'];
  if (!isObject(params) || typeof params['name'] !== 'string' || params['name'].length === 0) return bad('params.name must be a non-empty string');
  const args = params['arguments'];
  if (args !== undefined && !isObject(args)) return bad('params.arguments must be an object');
  return { kind: 'call', call: { id: idOf.id, name: params['name'], arguments: (args ?? {}) as Record<string, unknown> } };
}

// isCanonicalParse is a fast sufficient test; this is the exact one (texts with escapes).
function canonicalEquals(v: unknown, text: string): boolean {
  const c = tryCanonicalJson(v);
  return c.ok && c.text === text;
}

/** What the fold of a gateway day holds before a turn. */
export interface ToolFold {
  /** The upstream server's name as the OPEN frame recorded it. */
  server: string | undefined;
  /** Tool names offered, from the latest `tools` the frames recorded. */
  offered: Set<string> | undefined;
  /** Frame times of admitted calls, all tools, in order. */
  admitted: number[];
  /** Frame times of admitted calls, per tool. */
  perTool: Map<string, number[]>;
  /** Per tool, per argument: the sum of its figure values over the day's admitted calls (budgets, §18.3 step 8). */
  spent: Map<string, Map<string, string>>;
  /** The day's admitted calls in order, for group budgets (§18.3 step 8). */
  calls: SpentCall[];
  /** Running sums over `calls` for group budgets, extended as the day grows. */
  ledger: GroupLedger;
  /** Request id (canonical JSON of it) → authored hash of its first call. */
  ids: Map<string, string>;
  /** Time of the last frame folded. */
  time: number;
  /** A day with named upstreams (§18.6): upstream name → its serverInfo name and offered tools (its own names). */
  servers: Map<string, { server: string | undefined; offered: Set<string> | undefined }> | undefined;
}

function offeredOf(tools: unknown): Set<string> | undefined {
  if (!Array.isArray(tools)) return undefined;
  const s = new Set<string>();
  for (const t of tools) if (isObject(t) && typeof t['name'] === 'string') s.add(t['name']);
  return s;
}

/** Reads a recorded value: `<name>` when canonical, else `<name>_text` (its JSON text). */
export function recordedValue(data: Record<string, unknown>, name: string): unknown {
  if (data[name] !== undefined) return data[name];
  const t = data[`${name}_text`];
  if (typeof t !== 'string') return undefined;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return undefined;
  }
}

function inconsistent(sessionId: string, index: number, what: string): TallyError {
  return new TallyError('TALLY_REFEREE_TRANSCRIPT', 'The transcript is inconsistent with the referee.', { details: `session ${sessionId} entry ${index}: ${what}` });
}

/** Per-session folds of gateway days, through the one fold mechanism (`TranscriptFolds`, as `RefereeHistory`). */
export class ToolHistory {
  private readonly folds: TranscriptFolds<ToolFold>;
  private lastRead: { readonly bytes: Uint8Array; readonly turn: GatewayTurn } | undefined;

  constructor(source: EntrySource, maxSessions = 1024) {
    this.folds = new TranscriptFolds<ToolFold>(
      source,
      { inconsistent, start: () => ({ server: undefined, offered: undefined, admitted: [], perTool: new Map(), spent: new Map(), calls: [], ledger: new GroupLedger(), ids: new Map(), time: 0, servers: undefined }), step: (f, e) => foldEntry(f, e) },
      maxSessions,
    );
  }

  async fold(sessionId: string, size: number): Promise<ToolFold> {
    return (await this.folds.fold(sessionId, size))!.state;
  }

  /**
   * An entry the engine has just appended (see `TranscriptFolds.offer`); `authored`, for a turn,
   * the bytes it carries: when the ruling just read these very bytes ({@link read}), that parse
   * is folded instead of reading them a second time.
   */
  offer(sessionId: string, index: number, hash: string, entry: Entry, authored?: Uint8Array): void {
    const last = this.lastRead;
    this.lastRead = undefined;
    if (entry.kind !== 'frame' && entry.kind !== 'turn') return;
    // The very array the ruling read (the engine's private copy of the turn's bytes): the same parse.
    const turn = authored !== undefined && last !== undefined && last.bytes === authored ? last.turn : undefined;
    this.folds.offer(sessionId, index, hash, entry.parent, entry, (f, e) => foldEntry(f, e, turn));
  }

  /** `readGatewayTurn(authored)`, remembered for the {@link offer} of the turn that carries these bytes. */
  read(authored: Uint8Array): GatewayTurn {
    const turn = readGatewayTurn(authored);
    this.lastRead = { bytes: authored, turn };
    return turn;
  }
}

/** The turn a stored turn entry's authored bytes hold (`undefined`: not a call). */
function turnOfEntry(e: Entry): GatewayTurn | undefined {
  if (e.kind !== 'turn' || e.body.kind !== 'authored') return undefined;
  const bytes = fromBase64(e.body.bytes);
  return bytes === undefined ? undefined : readGatewayTurn(bytes);
}

function foldEntry(f: ToolFold, e: Entry, read?: GatewayTurn): void {
  if (e.kind === 'frame') {
    f.time = e.time;
    if (isObject(e.data)) {
      if (e.ordinal === -1 && typeof e.data['server'] === 'string') f.server = e.data['server'];
      if (e.ordinal === -1 && isObject(e.data['servers'])) f.servers = new Map();
      if (f.servers !== undefined && isObject(e.data['servers'])) foldServers(f.servers, e.data['servers'], e.ordinal === -1);
      const tools = recordedValue(e.data, 'tools');
      const offered = offeredOf(tools);
      if (offered) f.offered = offered;
    }
    return;
  }
  if (e.kind !== 'turn' || e.body.kind !== 'authored') return;
  const t = read ?? turnOfEntry(e);
  if (t === undefined || t.kind !== 'call') return;
  const key = JSON.stringify(t.call.id);
  if (!f.ids.has(key)) f.ids.set(key, e.body.hash);
  const r = e.ruling;
  if (isObject(r) && isObject(r['tool']) && r['tool']['admitted'] === true) {
    f.admitted.push(f.time);
    let xs = f.perTool.get(t.call.name);
    if (!xs) f.perTool.set(t.call.name, (xs = []));
    xs.push(f.time);
    f.calls.push({ time: f.time, name: t.call.name, args: t.call.arguments });
    let sums = f.spent.get(t.call.name);
    for (const [arg, v] of Object.entries(t.call.arguments)) {
      const x = budgetFigure(v);
      if (x === undefined) continue;
      if (!sums) f.spent.set(t.call.name, (sums = new Map()));
      sums.set(arg, decAdd(sums.get(arg) ?? '0', x));
    }
  }
}

/** The `servers` member of a frame (§18.6): each named upstream's `server` (OPEN frame only) and `tools` (recorded value). */
function foldServers(into: NonNullable<ToolFold['servers']>, servers: Record<string, unknown>, open: boolean): void {
  for (const [name, v] of Object.entries(servers)) {
    if (!isObject(v) || !UPSTREAM_NAME.test(name)) continue;
    let s = into.get(name);
    if (s === undefined) {
      if (!open) continue; // the day's upstreams are the OPEN frame's
      into.set(name, (s = { server: undefined, offered: undefined }));
    }
    if (open && typeof v['server'] === 'string') s.server = v['server'];
    const offered = offeredOf(recordedValue(v, 'tools'));
    if (offered) s.offered = offered;
  }
}

/** Where a call goes: the upstream's serverInfo name and whether it offers the tool (§18.3 step 3, §18.6). */
function routeOf(f: ToolFold, name: string): { offered: boolean; server: string | undefined } {
  if (f.servers === undefined) return { offered: f.offered === undefined || f.offered.has(name), server: f.server };
  const split = splitToolName(name);
  const s = split === undefined ? undefined : f.servers.get(split.server);
  if (s === undefined || split === undefined) return { offered: false, server: undefined };
  return { offered: s.offered === undefined || s.offered.has(split.tool), server: s.server };
}

/** Admitted calls within the window ending at `now` (times `t` with `now − window < t ≤ now`). */
function inWindow(times: readonly number[], rate: ToolRate, now: number): number {
  let n = 0;
  for (let i = times.length - 1; i >= 0 && times[i]! > now - rate.windowMs; i--) n++;
  return n;
}

function refused(code: ToolCode, message: string, name?: string, verdict?: JudgedVerdict): RuleOutcome {
  const tool: ToolRuling = { stage: 'tool', admitted: false, code, message: message.slice(0, 240), ...(name === undefined ? {} : { name }), ...(verdict === undefined ? {} : { verdict }) };
  return { ruling: { tool } as unknown as CanonicalObject, nonces: [] };
}

/**
 * The judge request of a tool call, but for the model: the action line
 * `TALLY_ACTION_V1|<instance>|<session>|mcp-tool-call|<tool>|-|<authored hash>` and the call as
 * the request's `intent` (every value a string: the tool, also as `market` so a rule such as
 * `never touch <tool>` reads as for a trade, the request id's and the arguments' canonical JSON,
 * and the upstream server's name when the day recorded one).
 */
export function toolJudgeRequest(j: Judging, c: { readonly instance: string; readonly session: string; readonly call: ToolCall; readonly argumentsText: string; readonly server: string | undefined; readonly authoredHash: string }): Omit<JudgeRequestInput, 'model'> {
  const intent: CanonicalObject = {
    action: TOOL_JUDGE_ACTION,
    arguments: c.argumentsText,
    id: JSON.stringify(c.call.id),
    market: c.call.name,
    ...(c.server === undefined ? {} : { server: c.server }),
    tool: c.call.name,
  };
  return {
    rules: j.rules,
    action: actionLine({ instance: c.instance, session: c.session, action: TOOL_JUDGE_ACTION, market: c.call.name, size: '-', intentHash: c.authoredHash }),
    intent,
    context: undefined,
    ...(j.judgeRequest === 'verdict' ? {} : { format: j.judgeRequest }),
  };
}

/** The verdict a recorded ruling holds for its tool call (replay), else `undefined`. */
function recordedToolVerdict(recorded: unknown): unknown {
  const t = isObject(recorded) ? recorded['tool'] : undefined;
  return isObject(t) ? t['verdict'] : undefined;
}

/** Step 9: live, asks the rule's judges; on replay (`recorded`), re-verifies the verdict the day recorded, never asking. */
async function judgeCall(ctx: RuleContext, rule: ToolRule & { judging: Judging }, instance: string, call: ToolCall, server: string | undefined, judges: ToolJudges | undefined): Promise<JudgedVerdict> {
  const argumentsText = tryCanonicalJson(call.arguments as unknown);
  const base = toolJudgeRequest(rule.judging, { instance, session: ctx.sessionId, call, argumentsText: argumentsText.ok ? argumentsText.text : '{}', server, authoredHash: toHex(authoredHash(sha256, ctx.authored)) });
  if (ctx.recorded !== undefined) return reverifyJudges(rule.judging, base, recordedToolVerdict(ctx.recorded));
  return askJudges(rule.judging, base, judges?.clients ?? [], judges?.timeoutMs ?? 20_000);
}

/** Rules on one gateway turn (see the module comment); `undefined` for the closing turn. */
export async function ruleToolTurn(ctx: RuleContext, history: ToolHistory, mandates: ParseMandateOptions, judges?: ToolJudges): Promise<RuleOutcome | undefined> {
  const t = history.read(ctx.authored);
  if (t.kind === 'close') return undefined;
  if (t.kind === 'refused') return refused(t.code, t.message);
  const { call } = t;
  const f = await history.fold(ctx.sessionId, slotIndex('frame', ctx.ordinal) + 1);
  const first = f.ids.get(JSON.stringify(call.id));
  if (first !== undefined) {
    const same = first === toHex(authoredHash(sha256, ctx.authored));
    return refused('tool_call_id_conflict', `request id ${JSON.stringify(call.id).slice(0, 80)} was used earlier today ${same ? 'for this very call (a retry is answered from the record, never sent twice)' : 'for another call'}`, call.name);
  }
  const route = routeOf(f, call.name);
  if (!route.offered) return refused('tool_not_offered', `${f.servers === undefined ? 'the upstream does' : 'no upstream does'} not offer a tool named "${call.name.slice(0, 80)}"`, call.name);
  const sealed = mandateOf(ctx.spec, mandates);
  if (sealed.kind === 'invalid') return refused('mandate_invalid', sealed.problem, call.name);
  if (sealed.kind === 'none') return { ruling: { tool: { stage: 'tool', admitted: true, name: call.name } } as unknown as CanonicalObject, nonces: [] };
  const m = sealed.mandate;
  const now = ctx.frameTime;
  if (now < m.startsAt) return refused('mandate_not_started', `the mandate is in force from ${new Date(m.startsAt).toISOString()}`, call.name);
  if (now >= m.expiresAt) return refused('mandate_expired', `the mandate expired at ${new Date(m.expiresAt).toISOString()}`, call.name);
  const rule = m.tools?.allow.get(call.name);
  if (rule === undefined) return refused('tool_not_allowed', m.tools === undefined ? 'the mandate has no tools section: no tool is allowed' : `the mandate does not allow the tool "${call.name.slice(0, 80)}"`, call.name);
  if (rule.server !== undefined && rule.server !== route.server) return refused('server_not_allowed', `the mandate allows "${call.name.slice(0, 80)}" only on server "${rule.server}" (this ${f.servers === undefined ? 'day' : 'call'}'s upstream is "${(route.server ?? '?').slice(0, 80)}")`, call.name);
  const why = checkArguments(rule, call.arguments);
  if (why !== undefined) return refused('tool_argument_refused', why, call.name);
  if (m.tools?.rate !== undefined && inWindow(f.admitted, m.tools.rate, now) >= m.tools.rate.max) return refused('tool_rate_limited', `at most ${m.tools.rate.max} calls per ${m.tools.rate.windowMs} ms`, call.name);
  if (rule.rate !== undefined && inWindow(f.perTool.get(call.name) ?? [], rule.rate, now) >= rule.rate.max) return refused('tool_rate_limited', `at most ${rule.rate.max} calls of "${call.name.slice(0, 80)}" per ${rule.rate.windowMs} ms`, call.name);
  const over = overBudget(rule, call.arguments, f.spent.get(call.name));
  if (over !== undefined) return refused('tool_budget_exceeded', `the "${over.arg}" of "${call.name.slice(0, 80)}" may sum to at most ${over.cap} over the day; with this call it would be ${over.total}`, call.name);
  const group = overGroupBudget(m.tools?.budgets ?? [], call.name, call.arguments, f.calls, now, f.ledger);
  if (group !== undefined) return refused('tool_budget_exceeded', `the "${group.budget.arg}" of ${group.budget.tools.map((x) => `"${x.slice(0, 40)}"`).join(', ').slice(0, 100)} may sum to at most ${group.budget.max} ${group.budget.windowMs === undefined ? 'over the day' : `per ${group.budget.windowMs} ms`}; with this call it would be ${group.total}`, call.name);
  if (rule.judging === undefined) return { ruling: { tool: { stage: 'tool', admitted: true, name: call.name } } as unknown as CanonicalObject, nonces: [] };
  const verdict = await judgeCall(ctx, rule as ToolRule & { judging: Judging }, m.instance, call, route.server, judges);
  if (!verdict.admitted) return refused(verdict.code ?? 'judge_denied', `the judges refused the call: ${verdict.message}`, call.name, verdict);
  return { ruling: { tool: { stage: 'tool', admitted: true, name: call.name, verdict } } as unknown as CanonicalObject, nonces: [] };
}
