import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { FAILURE_CLASSES, isMember, type CanonicalObject } from '../../protocol/index.js';
import type { Engine, TurnBodyInput, TurnResult } from '../../session/index.js';
import { CliError, EXIT, str, type Command } from '../command.js';
import { JUDGE_OPTIONS, judgeHelp } from './judge-option.js';
import { dbHelp, DB_OPTIONS, hashOption, printed, refused, sessionOption, withEngine } from './session-io.js';
import { ordinalOption } from './time.js';

export const turnCommand: Command = {
  name: 'turn',
  summary: 'Answer the pending frame with authored bytes or a stand-down.',
  help: `Usage: tally turn --session <id> (--auto | --ordinal <n> --parent <hash> --frame-root <hash>)
                  (--text <s> | --file <path> | --stand-down <class>) [--db <location>] [--json]
                  [--judge <url> (--judge-signature-header <name> | --judge-key <file>) [--judge-model <id>] [--judge-timeout <ms>]]

Records the one answer to the frame at <ordinal>. An identical retry is
answered as a duplicate (same entry hash, same ruling); a different answer into
a filled slot is refused (turn-conflict). Authored bytes of the form
{"intent": <signed Intent>, "context": …} are ruled on when the spec registers
agents; the ruling is recorded in the turn and printed.

Options:
  --session <id>        the session (64 hex)
  --auto                answer the pending frame: take ordinal, parent and frame root from it
  --ordinal <n>         the frame's ordinal (-1: write --ordinal=-1 or --ordinal open)
  --parent <hash>       the entry hash 'tally frame' printed
  --frame-root <hash>   the frame root 'tally frame' printed
  --text <s>            authored bytes: the UTF-8 text <s>
  --file <path>         authored bytes: the exact bytes of a file (- for stdin)
  --stand-down <class>  no answer: ${FAILURE_CLASSES.join(', ')}
${dbHelp(22)}
${judgeHelp(22)}

Exit codes: 0 recorded (or duplicate; a rejected intent is still a recorded turn),
1 refused with a diagnostic (printed on stderr: turn-conflict, stale-frame,
broken-chain, not-pending, sealed, wrong-session, malformed-entry), 2 usage, 3 I/O.`,
  options: {
    session: { type: 'string' },
    auto: { type: 'boolean' },
    ordinal: { type: 'string' },
    parent: { type: 'string' },
    'frame-root': { type: 'string' },
    text: { type: 'string' },
    file: { type: 'string' },
    'stand-down': { type: 'string' },
    ...DB_OPTIONS,
    ...JUDGE_OPTIONS,
  },
  async run({ values, positionals }, io) {
    if (positionals.length > 0) throw new CliError(`turn takes no arguments (got '${positionals[0]}'). Run 'tally turn --help'.`);
    const sessionId = sessionOption(values);
    const auto = values['auto'] === true;
    const ordinal = ordinalOption(values, !auto);
    const parent = hashOption(values, 'parent');
    const frameRoot = hashOption(values, 'frame-root');
    if (auto && (parent !== undefined || frameRoot !== undefined)) throw new CliError('--auto takes the parent and frame root from the pending frame: drop --parent/--frame-root');
    if (!auto && (parent === undefined || frameRoot === undefined)) throw new CliError('give --parent <hash> and --frame-root <hash> (from tally frame), or --auto');
    const body = bodyOf(values, io.cwd);
    const json = values['json'] === true;
    return withEngine(values, io, true, async (engine) => {
      let slot: { ordinal: number; parentHash: string; frameRoot: string };
      if (auto) {
        const d = await engine.describe(sessionId);
        if (!d.ok) return refused(io, 'turn', json, d);
        if (!d.pending) {
          // Nothing pending: an identical re-run of the turn that answered the last frame is a duplicate.
          const last = await lastTurn(engine, sessionId, d.size);
          const nothing = { ok: false, diagnostic: d.phase === 'sealed' ? 'sealed' : 'not-pending', message: d.phase === 'sealed' ? 'the session is sealed' : `no frame is pending (deliver frame ${d.nextOrdinal} first)` } as const;
          if (last === undefined || (ordinal !== undefined && ordinal !== last.ordinal)) return refused(io, 'turn', json, nothing);
          const again = await engine.turn({ sessionId, ...last, body });
          if (again.ok && again.duplicate) return printed(io, json, again, () => turnLines(again));
          return refused(io, 'turn', json, { ...nothing, message: `${nothing.message}; frame ${last.ordinal} is already answered by a different turn` });
        }
        if (ordinal !== undefined && ordinal !== d.pending.ordinal) throw new CliError(`--ordinal ${ordinal} is not the pending frame (${d.pending.ordinal})`);
        slot = { ordinal: d.pending.ordinal, parentHash: d.pending.entryHash, frameRoot: d.pending.frameRoot };
      } else {
        slot = { ordinal: ordinal as number, parentHash: parent as string, frameRoot: frameRoot as string };
      }
      const r = await engine.turn({ sessionId, ...slot, body });
      if (!r.ok) return refused(io, 'turn', json, r);
      return printed(io, json, r, () => turnLines(r));
    });
  },
};

/** The slot of the last recorded turn (from the session's last two entries), or undefined when there is none. */
async function lastTurn(engine: Engine, sessionId: string, size: number): Promise<{ ordinal: number; parentHash: string; frameRoot: string } | undefined> {
  const r = await engine.events(sessionId, Math.max(-1, size - 3), 2);
  if (!r.ok) return undefined;
  for (const e of [...r.events].reverse()) {
    if (e.entry.kind === 'turn') return { ordinal: e.entry.ordinal, parentHash: e.entry.parent, frameRoot: e.entry.frameRoot };
  }
  return undefined;
}

function bodyOf(values: Record<string, unknown>, cwd: string): TurnBodyInput {
  const text = str(values, 'text');
  const file = str(values, 'file');
  const sd = str(values, 'stand-down');
  const given = [text, file, sd].filter((x) => x !== undefined).length;
  if (given !== 1) throw new CliError('give exactly one of --text <s>, --file <path> or --stand-down <class>');
  if (sd !== undefined) {
    if (!isMember(FAILURE_CLASSES, sd)) throw new CliError(`--stand-down must be one of ${FAILURE_CLASSES.join(', ')}`);
    return { kind: 'stand-down', failureClass: sd };
  }
  if (text !== undefined) return { kind: 'authored', bytes: new TextEncoder().encode(text) };
  const path = file as string;
  try {
    return { kind: 'authored', bytes: new Uint8Array(readFileSync(path === '-' ? 0 : resolve(cwd, path))) };
  } catch (e) {
    throw new CliError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, EXIT.io, 'TALLY_CLI_IO');
  }
}

/** Readable lines for a recorded turn and its ruling. */
export function turnLines(r: Extract<TurnResult, { ok: true }>): string[] {
  const lines = [`turn ${r.ordinal} ${r.duplicate ? 'already recorded (duplicate)' : 'recorded'} as entry ${r.index}`, `entry hash  ${r.entryHash}`];
  // One overall outcome first (a judged intent is ruled by several checks: intent, policy, verdict…), then each check.
  const parts = Object.entries(r.ruling ?? {}).filter((e): e is [string, CanonicalObject] => typeof e[1] === 'object' && e[1] !== null && !Array.isArray(e[1]) && typeof (e[1] as CanonicalObject)['admitted'] === 'boolean');
  const refused = parts.find(([, o]) => o['admitted'] === false);
  if (parts.length > 1) lines.push(refused === undefined ? `outcome     ADMITTED (${parts.map(([by]) => by).join(', ')} all admitted)` : `outcome     REJECTED by ${refused[0]}: ${String(refused[1]['code'])}`);
  for (const [by, v] of Object.entries(r.ruling ?? {})) {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) continue;
    const o = v as CanonicalObject;
    if (o['admitted'] === true) lines.push(`ruling      ${by} ADMITTED${o['action'] === undefined ? '' : `: ${String(o['action'])} by ${String(o['agent_id'])}`}${o['intent_hash'] === undefined ? '' : ` (intent ${String(o['intent_hash'])})`}`);
    else if (o['admitted'] === false) lines.push(`ruling      ${by} REJECTED: ${String(o['code'])} (${String(o['stage'])}): ${String(o['message'])}`);
  }
  return lines;
}
