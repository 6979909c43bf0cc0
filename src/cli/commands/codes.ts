import { INTENT_RULING_CATALOGUE } from '../../intent/catalogue.js';
import { REFEREE_RULING_CATALOGUE } from '../../referee/catalogue.js';
import { PAYMENT_RULING_CATALOGUE } from '../../payments/catalogue.js';
import { TOOL_CODE_CATALOGUE } from '../../referee/tool-codes.js';
import { FAILURE_CLASSES, SESSION_DIAGNOSTICS, type FailureClass, type SessionDiagnostic } from '../../protocol/index.js';
import { CliError, println, type Command } from '../command.js';

/** When the engine answers with each session diagnostic (nothing is written), and what the caller does. */
export const SESSION_DIAGNOSTIC_CATALOGUE: Readonly<Record<SessionDiagnostic, { readonly when: string; readonly fix: string }>> = Object.freeze({
  'wrong-session': {
    when: 'The message names a session the store does not hold (or a turn names another session than its slot).',
    fix: 'Use the session id open returned; check --db / TALLY_DB points at the right store.',
  },
  'broken-chain': {
    when: 'A frame or turn does not continue the chain: wrong ordinal, or a parent hash that is not the head it must extend.',
    fix: 'Describe the session and answer the pending frame with its ordinal and entry hash (or use tally turn --auto).',
  },
  'turn-conflict': {
    when: 'The slot is already filled with DIFFERENT content (another turn, or a frame with another root); an identical retry would be a duplicate.',
    fix: 'Nothing to fix in the transcript: the first answer stands. Retry only with the exact same bytes.',
  },
  'stale-frame': {
    when: 'The turn carries the right ordinal and parent but the root of another frame than the one delivered.',
    fix: 'Answer the frame that was delivered: take its frame root from tally frame or describe.',
  },
  'not-pending': {
    when: 'A turn arrives when no frame is pending, or a frame / the seal arrives while a frame still awaits its answer.',
    fix: 'Deliver the frame before answering it; answer (or stand down) a pending frame before the next frame or the seal.',
  },
  sealed: {
    when: 'The session is sealed: it takes nothing new (identical retries are still answered).',
    fix: 'Open a new session for new work; the sealed day is final.',
  },
  'malformed-entry': {
    when: 'The input does not parse or breaks a limit, or a declared hash differs from the one recomputed from the bytes.',
    fix: 'Send well-formed input; do not declare hashes you did not compute from the exact bytes you send.',
  },
});

/** What each stand-down class records. */
export const FAILURE_CLASS_CATALOGUE: Readonly<Record<FailureClass, string>> = Object.freeze({
  provider: 'The model provider failed (error, refusal, outage); the runtime answered for the agent.',
  timeout: 'The agent did not answer before the deadline.',
  malformed: 'The agent answered, but its output could not be parsed into a turn.',
});

interface Row {
  readonly source: string;
  readonly stage: string;
  readonly code: string;
  readonly when: string;
  readonly fix: string;
}

/** Every ruling a turn can carry: the intent contract's, then the referee's (mandate, judge, tickets), then x402 payments', then the MCP gateway's (stage tool). */
function rulingRows(): Row[] {
  return [
    ...INTENT_RULING_CATALOGUE.map((r) => ({ source: 'intent', stage: r.stage, code: r.code, when: r.when, fix: r.fix })),
    ...REFEREE_RULING_CATALOGUE.map((r) => ({ source: 'referee', stage: r.stage, code: r.code, when: r.when, fix: r.fix })),
    ...PAYMENT_RULING_CATALOGUE.map((r) => ({ source: 'x402', stage: r.stage, code: r.code, when: r.when, fix: r.fix })),
    ...TOOL_CODE_CATALOGUE.map((r) => ({ source: 'gateway', stage: 'tool', code: r.code, when: r.when, fix: r.fix })),
  ];
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line.length > 0 && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else {
      line = line.length === 0 ? word : `${line} ${word}`;
    }
  }
  if (line.length > 0) out.push(line);
  return out;
}

export const codesCommand: Command = {
  name: 'codes',
  summary: 'List every ruling code, session diagnostic and stand-down class: when it happens, how to fix it.',
  help: `Usage: tally codes [--json]

Prints the catalogue of every ruling a turn can carry ({stage, code, when, fix}),
every session diagnostic the engine refuses a message with (nothing is written),
and the stand-down classes.

Options:
  --json   print {rulings, diagnostics, standDowns} as JSON

Exit codes: 0 printed, 2 usage error.`,
  options: { json: { type: 'boolean' } },
  async run({ values, positionals }, io) {
    if (positionals.length > 0) throw new CliError(`codes takes no arguments (got '${positionals[0]}'). Run 'tally codes --help'.`);
    const rulings = rulingRows();
    const diagnostics = SESSION_DIAGNOSTICS.map((d) => ({ code: d, ...SESSION_DIAGNOSTIC_CATALOGUE[d] }));
    const standDowns = FAILURE_CLASSES.map((c) => ({ class: c, when: FAILURE_CLASS_CATALOGUE[c] }));
    if (values['json'] === true) {
      println(io.stdout, JSON.stringify({ rulings, diagnostics, standDowns }, null, 2));
      return 0;
    }
    const textWidth = 72;
    const pad = ' '.repeat(47);
    println(io.stdout, 'RULINGS (recorded in the turn; the turn is written)');
    println(io.stdout, `${'SOURCE'.padEnd(8)}${'STAGE'.padEnd(11)}${'CODE'.padEnd(28)}WHEN / FIX`);
    for (const r of rulings) {
      const when = wrap(r.when, textWidth);
      const fix = wrap(`fix: ${r.fix}`, textWidth);
      println(io.stdout, `${r.source.padEnd(8)}${r.stage.padEnd(11)}${r.code.padEnd(28)}${when[0] ?? ''}`);
      for (const l of [...when.slice(1), ...fix]) println(io.stdout, pad + l);
    }
    println(io.stdout, '');
    println(io.stdout, 'SESSION DIAGNOSTICS (the message is refused; nothing is written; CLI exit 1)');
    for (const d of diagnostics) {
      const when = wrap(d.when, textWidth);
      const fix = wrap(`fix: ${d.fix}`, textWidth);
      println(io.stdout, `${''.padEnd(19)}${d.code.padEnd(28)}${when[0] ?? ''}`);
      for (const l of [...when.slice(1), ...fix]) println(io.stdout, pad + l);
    }
    println(io.stdout, '');
    println(io.stdout, 'STAND-DOWN CLASSES (the runtime answers for the agent)');
    for (const s of standDowns) println(io.stdout, `${''.padEnd(19)}${s.class.padEnd(28)}${s.when}`);
    return 0;
  },
};
