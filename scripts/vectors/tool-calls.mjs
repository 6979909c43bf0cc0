// tool-calls.json (PROTOCOL.md §18): one scenario per tool-call ruling code
// (and an admitted call), as the gateway records a day: the OPEN frame's
// mcp-open data, each tools/call turn's authored bytes, each tool-result
// frame's data, the closing turn and the seal; the transcript the referee
// engine wrote; the ruling of the last call; and what replay answers.
// Called by gen-vectors.mjs.
import { createEngine } from '../../dist/index.js';
import { createLocalJudge, createRefereeEngine, createRefereeRuler, signMandateWithKey } from '../../dist/referee/index.js';
import { MemoryStore } from '../../dist/store/index.js';
import { replay } from '../../dist/receipt/index.js';
import { privateKeyToAccount } from 'viem/accounts';
import { INTENT_KEYS } from './intents.mjs';
import { REFEREE_KEYS } from './rulings.mjs';

const A = (k) => privateKeyToAccount(k).address;
const T0 = 1893456000000; // 2030-01-01T00:00:00Z
const enc = new TextEncoder();
const dec = new TextDecoder();

const TOOLS = {
  allow: {
    echo: {},
    pay: { args: { amount: { type: 'decimal', maximum: '10' }, payee: { enum: ['acme'] } }, required: ['amount', 'payee'], additional: false, rate: { max: 1, window_ms: 60000 } },
    files: { server: 'another-server' },
  },
};
function mandate(over = {}) {
  return {
    version: 2, instance: 'gateway-corpus/1', principal: A(REFEREE_KEYS.principal), operator: A(REFEREE_KEYS.operator), executor: A(REFEREE_KEYS.executor),
    actions: ['transfer'], caps: { size: '1', leverage: '1', slippage: '0' }, quota: { cap: '1' }, tx_cap: 1,
    starts_at: T0, expires_at: T0 + 3600000, tools: TOOLS, ...over,
  };
}
const signed = (name, m) => signMandateWithKey({ name, agents: { agent: A(INTENT_KEYS.alpha) }, mcp: { run: 'corpus' }, mandate: m }, REFEREE_KEYS.principal);
const OPEN = {
  kind: 'mcp-open',
  server: 'corpus-server',
  initialize: { capabilities: { tools: {} }, protocolVersion: '2025-11-25', serverInfo: { name: 'corpus-server', version: '1' } },
  tools: ['echo', 'pay', 'files', 'secret'].map((name) => ({ inputSchema: { type: 'object' }, name })),
};
const call = (id, name, args) => JSON.stringify({ id, jsonrpc: '2.0', method: 'tools/call', params: { ...(args === undefined ? {} : { arguments: args }), name } });
const result = (id, text) => ({ id, kind: 'tool-result', outcome: 'result', result: { content: [{ text, type: 'text' }] } });

/**
 * The judge clients of a case's `judge` member: the local judge signing with `key` under `model`,
 * answering `answer` ("ALLOW" or "DENY") with the call's action line copied; "none": no client.
 */
export function corpusJudges(j) {
  if (j.answer === 'none') return [];
  return [createLocalJudge({ key: j.key, model: j.model, script: (q) => JSON.stringify({ reason: `the corpus judge says ${j.answer}`, verdict: j.answer, action: q.request.action }) })];
}

/** Drives one day: `calls` are [time, authored text, result-frame data]; the last call carries `code`. */
async function run(name, code, spec, calls, opts = {}) {
  const store = new MemoryStore();
  const { engine } = createRefereeEngine({ store, ...(opts.judge === undefined ? {} : { panel: corpusJudges(opts.judge) }) });
  const o = await (opts.openWithout ? createEngine({ store }) : engine).open(spec);
  if (!o.ok) throw new Error(`${name}: ${o.message}`);
  const sid = o.sessionId;
  const open = opts.open ?? OPEN;
  let f = await engine.frame({ sessionId: sid, ordinal: -1, time: calls[0][0], data: open });
  const steps = [{ time: calls[0][0], data: open }];
  let ruling;
  for (let i = 0; i < calls.length; i++) {
    const [time, authored, data] = calls[i];
    if (!f.ok) throw new Error(`${name}: ${f.message}`);
    const t = await engine.turn({ sessionId: sid, ordinal: i - 1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(authored) } });
    if (!t.ok) throw new Error(`${name}: ${t.message}`);
    ruling = t.ruling?.tool;
    f = await engine.frame({ sessionId: sid, ordinal: i, time, data });
    steps[steps.length - 1].authored = authored;
    steps.push({ time, data });
  }
  const close = '{"close":"agent-disconnected"}';
  const t = await engine.turn({ sessionId: sid, ordinal: calls.length - 1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: enc.encode(close) } });
  if (!t.ok) throw new Error(t.message);
  steps[steps.length - 1].authored = close;
  const fin = await engine.finalize(sid);
  if (!fin.ok) throw new Error(fin.message);
  const lines = [];
  for await (const l of engine.exportEntries(sid)) lines.push(dec.decode(l));
  const got = ruling?.admitted ? 'admitted' : ruling?.code;
  if (got !== code) throw new Error(`${name}: the last call was ruled ${JSON.stringify(ruling)}, not ${code}`);
  const r = await replay([enc.encode(lines.join('\n') + '\n')], { ruler: (s) => createRefereeRuler({ store: s }) });
  const replayed = r.ok ? { ok: true, turns: r.turns, rulings: r.rulings } : { ok: false, stage: r.stage, ...(typeof r.index === 'number' ? { index: r.index } : {}), ...(typeof r.code === 'string' ? { code: r.code } : {}) };
  return { name, code, spec, ...(opts.openWithout ? { openedWithout: 'referee' } : {}), ...(opts.judge === undefined ? {} : { judge: opts.judge }), steps, lines, expect: { index: 2 * calls.length, tool: ruling, replay: replayed } };
}

// Budgets (§18.3 step 8): spend's amount may sum to 10 over the day.
const BUDGET_OPEN = { ...OPEN, tools: [...OPEN.tools, { inputSchema: { type: 'object' }, name: 'spend' }] };
const budgeted = () => signed('gateway-corpus-budget', mandate({ tools: { allow: { spend: { args: { amount: { type: 'decimal' } }, budget: { amount: '10' } } } } }));
// Group budgets (§18.3 step 8): spend and tip share an amount budget of 10 per 60 s of frame time.
const GROUP_OPEN = { ...OPEN, tools: [...BUDGET_OPEN.tools, { inputSchema: { type: 'object' }, name: 'tip' }] };
const grouped = () => signed('gateway-corpus-group', mandate({ tools: { allow: { spend: { args: { amount: { type: 'decimal' } } }, tip: { args: { amount: { type: 'integer' } } } }, budgets: [{ arg: 'amount', max: '10', tools: ['spend', 'tip'], window_ms: 60000 }] } }));
// Judges on a tool (§18.3 step 9): note's calls are put to one judge, Anvil #5's key.
const JUDGE_KEY = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';
const judge = (answer) => ({ answer, key: JUDGE_KEY, model: 'corpus-judge-1' });
const judged = () => signed('gateway-corpus-judged', mandate({ tools: { allow: { note: { args: { text: { type: 'string' } }, judges: [A(JUDGE_KEY).toLowerCase()], rules: ['Notes must not mention passwords.'] } } } }));
const JUDGE_OPEN = { ...OPEN, tools: [...OPEN.tools, { inputSchema: { type: 'object' }, name: 'note' }] };
// Named upstreams (§18.6): a and b, tools offered as a__<tool>, b__<tool>.
const NAMED_OPEN = {
  kind: 'mcp-open',
  servers: {
    a: { initialize: OPEN.initialize, server: 'corpus-server', tools: [{ inputSchema: { type: 'object' }, name: 'echo' }] },
    b: { initialize: { ...OPEN.initialize, serverInfo: { name: 'other-server', version: '1' } }, server: 'other-server', tools: [{ inputSchema: { type: 'object' }, name: 'files' }] },
  },
};
const named = () => signed('gateway-corpus-named', mandate({ tools: { allow: { a__echo: { server: 'corpus-server' }, b__files: { server: 'another-server' } } } }));
// A tool-only mandate (§18.7): no trading member, no agents.
const toolOnly = () =>
  signMandateWithKey({ name: 'gateway-corpus-tool-only', mcp: { run: 'corpus' }, mandate: { version: 2, instance: 'gateway-corpus/1', principal: A(REFEREE_KEYS.principal), starts_at: T0, expires_at: T0 + 3600000, tools: { allow: { echo: {} } } } }, REFEREE_KEYS.principal);

export async function toolCallVectors() {
  const m = signed('gateway-corpus', mandate());
  const at = (k) => T0 + k * 1000;
  const cases = [
    await run('admitted: a gateway day without a mandate admits every offered tool', 'admitted', { name: 'gateway-corpus-open', mcp: { run: 'corpus' } }, [[at(1), call(1, 'echo', { message: 'hi' }), result(1, 'hi')]]),
    await run('admitted: an allowed tool with arguments the mandate allows', 'admitted', m, [[at(1), call(1, 'pay', { amount: '9.5', payee: 'acme' }), result(1, 'paid')]]),
    await run('tool_call_malformed: authored bytes that are not a tools/call request', 'tool_call_malformed', m, [[at(1), '{"id":1,"jsonrpc":"2.0","method":"tools/list"}', result(1, 'x')]]),
    await run('tool_call_not_canonical: a fractional number (recorded as its JSON text)', 'tool_call_not_canonical', m, [[at(1), '{"id":1,"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"amount":1.5,"payee":"acme"},"name":"pay"}}', result(1, 'x')]]),
    await run('tool_call_id_conflict: request id 1 again with other bytes', 'tool_call_id_conflict', m, [[at(1), call(1, 'echo', { message: 'a' }), result(1, 'a')], [at(2), call(1, 'echo', { message: 'b' }), result(1, 'b')]]),
    await run('tool_not_offered: a tool the OPEN frame does not list', 'tool_not_offered', m, [[at(1), call(1, 'nope'), result(1, 'x')]]),
    await run('mandate_invalid: opened by an engine without the referee, its tools section with an unknown member', 'mandate_invalid', signed('gateway-corpus-invalid', mandate({ tools: { allow: {}, budget: 1 } })), [[at(1), call(1, 'echo'), result(1, 'x')]], { openWithout: true }),
    await run('mandate_not_started: a call before starts_at', 'mandate_not_started', m, [[T0 - 1000, call(1, 'echo'), result(1, 'x')]]),
    await run('mandate_expired: a call at expires_at', 'mandate_expired', m, [[T0 + 3600000, call(1, 'echo'), result(1, 'x')]]),
    await run('tool_not_allowed: an offered tool the mandate does not list', 'tool_not_allowed', m, [[at(1), call(1, 'secret'), result(1, 'x')]]),
    await run('server_not_allowed: a tool allowed only on another server', 'server_not_allowed', m, [[at(1), call(1, 'files'), result(1, 'x')]]),
    await run('tool_argument_refused: an amount over the decimal cap', 'tool_argument_refused', m, [[at(1), call(1, 'pay', { amount: '10.01', payee: 'acme' }), result(1, 'x')]]),
    await run('tool_rate_limited: a second pay within its 60 s window', 'tool_rate_limited', m, [[at(1), call(1, 'pay', { amount: '1', payee: 'acme' }), result(1, 'paid')], [at(30), call(2, 'pay', { amount: '1', payee: 'acme' }), result(2, 'x')]]),
    await run('admitted: spend amounts 6 then "4" sum to exactly the budget of 10', 'admitted', budgeted(), [[at(1), call(1, 'spend', { amount: 6 }), result(1, 'ok')], [at(2), call(2, 'spend', { amount: '4' }), result(2, 'ok')]], { open: BUDGET_OPEN }),
    await run('tool_budget_exceeded: spend amounts 6 then "4.5" would sum to 10.5, over the budget of 10', 'tool_budget_exceeded', budgeted(), [[at(1), call(1, 'spend', { amount: 6 }), result(1, 'ok')], [at(2), call(2, 'spend', { amount: '4.5' }), result(2, 'x')]], { open: BUDGET_OPEN }),
    await run('tool_budget_exceeded: a refused call spends nothing, so the third call is ruled on 6 only, and 6 + "4.01" is over', 'tool_budget_exceeded', budgeted(), [[at(1), call(1, 'spend', { amount: 6 }), result(1, 'ok')], [at(2), call(2, 'spend', { amount: '5' }), result(2, 'x')], [at(3), call(3, 'spend', { amount: '4.01' }), result(3, 'x')]], { open: BUDGET_OPEN }),
    await run('admitted: spend "4.5" then tip 5 share the group budget of 10 per 60 s (9.5)', 'admitted', grouped(), [[at(1), call(1, 'spend', { amount: '4.5' }), result(1, 'ok')], [at(2), call(2, 'tip', { amount: 5 }), result(2, 'ok')]], { open: GROUP_OPEN }),
    await run('tool_budget_exceeded: spend "4.5", tip 5, then tip 1 would make 10.5 within 60 s, over the group budget of 10', 'tool_budget_exceeded', grouped(), [[at(1), call(1, 'spend', { amount: '4.5' }), result(1, 'ok')], [at(2), call(2, 'tip', { amount: 5 }), result(2, 'ok')], [at(3), call(3, 'tip', { amount: 1 }), result(3, 'x')]], { open: GROUP_OPEN }),
    await run('admitted: a call is ruled at the time of the frame it answers; spend "4.5" (at 1 s) has left the 60 s window when the last tip 5 is ruled at 62 s, so it sums 5 + 5', 'admitted', grouped(), [[at(1), call(1, 'spend', { amount: '4.5' }), result(1, 'ok')], [at(30), call(2, 'tip', { amount: 0 }), result(2, 'ok')], [at(62), call(3, 'tip', { amount: 5 }), result(3, 'ok')], [at(63), call(4, 'tip', { amount: 5 }), result(4, 'ok')]], { open: GROUP_OPEN }),
    await run('tool_budget_exceeded: a call whose outcome was UNKNOWN (timeout) still counts against the group budget', 'tool_budget_exceeded', grouped(), [[at(1), call(1, 'spend', { amount: '8' }), { detail: 'no answer within 30000 ms', id: 1, kind: 'tool-result', outcome: 'unknown', reason: 'timeout' }], [at(2), call(2, 'tip', { amount: 3 }), result(2, 'x')]], { open: GROUP_OPEN }),
    await run('admitted: the tool\'s judge gave a signed ALLOW (the verdict is recorded in the ruling)', 'admitted', judged(), [[at(1), call(1, 'note', { text: 'buy milk' }), result(1, 'noted')]], { open: JUDGE_OPEN, judge: judge('ALLOW') }),
    await run('judge_denied: the tool\'s judge gave a signed DENY', 'judge_denied', judged(), [[at(1), call(1, 'note', { text: 'the password is hunter2' }), result(1, 'x')]], { open: JUDGE_OPEN, judge: judge('DENY') }),
    await run('judge_unavailable: the gateway has no judge for the tool (fail closed, failure no_judge)', 'judge_unavailable', judged(), [[at(1), call(1, 'note', { text: 'buy milk' }), result(1, 'x')]], { open: JUDGE_OPEN, judge: judge('none') }),
    await run('admitted: named upstreams, a__echo on upstream a (corpus-server) as its rule says', 'admitted', named(), [[at(1), call(1, 'a__echo', { message: 'hi' }), result(1, 'hi')]], { open: NAMED_OPEN }),
    await run('server_not_allowed: named upstreams, b__files is on other-server, its rule says another-server', 'server_not_allowed', named(), [[at(1), call(1, 'b__files'), result(1, 'x')]], { open: NAMED_OPEN }),
    await run('tool_not_offered: named upstreams, no upstream c (and a bare name splits to none)', 'tool_not_offered', named(), [[at(1), call(1, 'echo'), result(1, 'x')], [at(2), call(2, 'c__echo'), result(2, 'x')]], { open: NAMED_OPEN }),
    await run('admitted: a tool-only mandate (no trading member, no agents)', 'admitted', toolOnly(), [[at(1), call(1, 'echo', { message: 'hi' }), result(1, 'hi')]]),
  ];
  return {
    description: 'One scenario per tool-call ruling code of the MCP gateway (PROTOCOL.md §18), and admitted calls. spec: the genesis spec (mcp, and a mandate signed by its principal, Anvil #3, with a tools section); openedWithout "referee": opened by an engine without the referee; judge: the judge the referee engine asks (the local judge signing with key under model and answering answer, ALLOW or DENY, its action copied; none: no judge client), whose recorded verdict replay re-verifies without asking. steps: frame ordinal -1 (data: mcp-open), 0, 1, … each with its time and data (mcp-open with servers when the upstreams are named, §18.6), answered by the authored UTF-8 text (a tools/call request, the last one the closing turn {"close":…}); then the seal. lines: the transcript the referee engine wrote. expect: the turn index of the last call, its tool ruling, and what replaying lines with the referee ruler answers.',
    cases,
  };
}
