import { INTENT_RULING_CATALOGUE } from '../../intent/catalogue.js';
import { REFEREE_RULING_CATALOGUE } from '../../referee/catalogue.js';
import { PAYMENT_RULING_CATALOGUE } from '../../payments/catalogue.js';
import { TOOL_CODE_CATALOGUE } from '../../referee/tool-codes.js';
import { CHAIN_ERROR_CATALOGUE, CHAIN_ERROR_CODES, FAILURE_CLASSES, SESSION_DIAGNOSTICS, type FailureClass, type SessionDiagnostic } from '../../protocol/index.js';
import type { ReplayDivergenceKind } from '../../receipt/index.js';
import type { MandateSignatureCheck } from '../../referee/index.js';
import { CliError, didYouMean, println, type Command } from '../command.js';

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

/** What each replay divergence kind means (tally replay). */
export const REPLAY_DIVERGENCE_CATALOGUE: Readonly<Record<ReplayDivergenceKind, { readonly when: string; readonly fix: string }>> = Object.freeze({
  'ruling-diverged': {
    when: 'Replay fed the recorded turn to a fresh engine and the ruler ruled otherwise than the recorded ruling (the ruling was edited, or the day was recorded with another ruler or version).',
    fix: 'Check --ruler (auto picks referee when the spec seals a mandate); if it is right, the recorded ruling is not what the rules give.',
  },
  'entry-diverged': {
    when: 'The engine built another entry from the same recorded input (a field other than the ruling differs).',
    fix: 'The entry was re-hashed after an edit, or was written by another engine version; the changed fields are listed.',
  },
  rejected: {
    when: 'The engine refused a recorded input outright with a session diagnostic; replay cannot go on after it.',
    fix: 'The recorded input is not one the engine accepts: see the diagnostic it names (tally codes <diagnostic>).',
  },
});

/** Why `open` refuses a spec whose mandate is not signed as a version-2 mandate must be (the session is not opened). */
export const MANDATE_OPEN_CATALOGUE: Readonly<Record<Extract<MandateSignatureCheck, { ok: false }>['code'], { readonly when: string; readonly fix: string }>> = Object.freeze({
  mandate_unsigned: {
    when: 'The spec seals a mandate without its principal\'s signature (or a version-1 mandate, accepted only when replaying a day sealed before mandates were signed).',
    fix: "Sign the mandate as its principal (tally mandate sign) and open the signed spec.",
  },
  mandate_bad_signature: {
    when: "The mandate's signature does not verify: not by the principal it names, over other bytes, or in a scheme the mandate does not declare.",
    fix: 'Sign the mandate again after its last edit, with the principal\'s key (tally mandate verify shows what is wrong).',
  },
});

/** Every replay divergence kind, in the order tally codes lists them. */
const REPLAY_KINDS = Object.keys(REPLAY_DIVERGENCE_CATALOGUE) as ReplayDivergenceKind[];

/** One explained code, whatever its family (what `tally codes <code>` prints). */
export interface CodeEntry {
  readonly family: 'ruling' | 'open' | 'diagnostic' | 'stand-down' | 'verify' | 'replay';
  readonly code: string;
  readonly source?: string;
  readonly stage?: string;
  readonly when: string;
  readonly fix?: string;
}

/** Every code tally codes knows, each once per family, read from the catalogues. */
export function codeEntries(): CodeEntry[] {
  return [
    ...rulingRows().map((r) => ({ family: 'ruling' as const, code: r.code, source: r.source, stage: r.stage, when: r.when, fix: r.fix })),
    ...Object.entries(MANDATE_OPEN_CATALOGUE).map(([c, e]) => ({ family: 'open' as const, code: c, ...e })),
    ...SESSION_DIAGNOSTICS.map((d) => ({ family: 'diagnostic' as const, code: d, ...SESSION_DIAGNOSTIC_CATALOGUE[d] })),
    ...FAILURE_CLASSES.map((c) => ({ family: 'stand-down' as const, code: c, when: FAILURE_CLASS_CATALOGUE[c] })),
    ...CHAIN_ERROR_CODES.map((c) => ({ family: 'verify' as const, code: c, ...CHAIN_ERROR_CATALOGUE[c] })),
    ...REPLAY_KINDS.map((k) => ({ family: 'replay' as const, code: k, ...REPLAY_DIVERGENCE_CATALOGUE[k] })),
  ];
}

const FAMILY_TITLE: Record<CodeEntry['family'], string> = {
  ruling: 'a ruling recorded in the turn (the turn is written)',
  open: 'a refusal to open the spec (the session is not opened; exit 1)',
  diagnostic: 'a session diagnostic (the message is refused; nothing is written; CLI exit 1)',
  'stand-down': 'a stand-down class (the runtime answered for the agent)',
  verify: 'a bundle verification failure (tally verify, replay, view; exit 1)',
  replay: 'a replay divergence (tally replay; exit 1)',
};

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

/** `tally codes <code>`: every entry of that name, or a usage error with the nearest known code. */
function explain(code: string, json: boolean, io: Parameters<Command['run']>[1]): number {
  const all = codeEntries();
  const entries = all.filter((e) => e.code === code);
  if (entries.length === 0) {
    const guess = didYouMean(code, [...new Set(all.map((e) => e.code))]);
    throw new CliError(`unknown code '${code}'${guess === undefined ? '' : ` (did you mean '${guess}'?)`}. Run 'tally codes' for the list.`);
  }
  if (json) {
    println(io.stdout, JSON.stringify({ ok: true, code, entries }));
    return 0;
  }
  entries.forEach((e, i) => {
    if (i > 0) println(io.stdout, '');
    println(io.stdout, `${e.code}: ${FAMILY_TITLE[e.family]}${e.source === undefined ? '' : `, from the ${e.source} ruler at stage ${e.stage}`}`);
    for (const l of wrap(`when: ${e.when}`, 76)) println(io.stdout, `  ${l}`);
    if (e.fix !== undefined) for (const l of wrap(`fix: ${e.fix}`, 76)) println(io.stdout, `  ${l}`);
  });
  return 0;
}

export const codesCommand: Command = {
  name: 'codes',
  summary: 'List or explain (tally codes <code>) every ruling, refusal, diagnostic, verification and replay code: when it happens, how to fix it.',
  help: `Usage: tally codes [<code>] [--json]

Prints the catalogue of every ruling a turn can carry ({stage, code, when, fix}),
the mandate refusals at open, every session diagnostic the engine refuses a
message with (nothing is written),
the stand-down classes, every bundle verification code (tally verify) and every
replay divergence kind. With <code>, explains that one code (every family that
uses the name: wrong-session is both a diagnostic and a verification code).

Options:
  --json   print {rulings, open, diagnostics, standDowns, verify, replay} as JSON;
           with <code>, {ok, code, entries: [{family, code, stage?, when, fix}]}

Exit codes: 0 printed, 2 usage error (an unknown code, with the nearest known one).`,
  options: { json: { type: 'boolean' } },
  async run({ values, positionals }, io) {
    if (positionals.length > 1) throw new CliError(`codes takes at most one code (got ${positionals.length} arguments). Run 'tally codes --help'.`);
    if (positionals.length === 1) return explain(positionals[0]!, values['json'] === true, io);
    const rulings = rulingRows();
    const diagnostics = SESSION_DIAGNOSTICS.map((d) => ({ code: d, ...SESSION_DIAGNOSTIC_CATALOGUE[d] }));
    const standDowns = FAILURE_CLASSES.map((c) => ({ class: c, when: FAILURE_CLASS_CATALOGUE[c] }));
    if (values['json'] === true) {
      const verify = CHAIN_ERROR_CODES.map((c) => ({ code: c, ...CHAIN_ERROR_CATALOGUE[c] }));
      const replay = REPLAY_KINDS.map((k) => ({ kind: k, ...REPLAY_DIVERGENCE_CATALOGUE[k] }));
      const open = Object.entries(MANDATE_OPEN_CATALOGUE).map(([c, e]) => ({ code: c, ...e }));
      println(io.stdout, JSON.stringify({ rulings, open, diagnostics, standDowns, verify, replay }, null, 2));
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
    for (const [title, rows] of [
      ['MANDATE REFUSALS AT OPEN (the spec is refused; no session is opened)', Object.entries(MANDATE_OPEN_CATALOGUE).map(([c, e]) => ({ code: c, ...e }))],
      ['VERIFICATION CODES (tally verify, replay and the desk reject the bundle; exit 1)', CHAIN_ERROR_CODES.map((c) => ({ code: c as string, ...CHAIN_ERROR_CATALOGUE[c] }))],
      ['REPLAY DIVERGENCES (tally replay; exit 1)', REPLAY_KINDS.map((k) => ({ code: k as string, ...REPLAY_DIVERGENCE_CATALOGUE[k] }))],
    ] as const) {
      println(io.stdout, '');
      println(io.stdout, title);
      for (const d of rows) {
        const when = wrap(d.when, textWidth);
        const fix = wrap(`fix: ${d.fix}`, textWidth);
        println(io.stdout, `${''.padEnd(19)}${d.code.padEnd(28)}${when[0] ?? ''}`);
        for (const l of [...when.slice(1), ...fix]) println(io.stdout, pad + l);
      }
    }
    println(io.stdout, '');
    println(io.stdout, "Run 'tally codes <code>' to explain one code.");
    return 0;
  },
};
