import type { CanonicalValue } from '../../protocol/index.js';
import { CliError, invocation, str, type Command } from '../command.js';
import { dbHelp, DB_OPTIONS, hashOption, jsonArgument, printed, refused, sessionOption, withEngine } from './session-io.js';
import { ordinalOption, timeOption } from './time.js';

export const frameCommand: Command = {
  name: 'frame',
  summary: 'Deliver a frame: the OPEN frame (ordinal -1) or the next wake.',
  help: `Usage: tally frame --session <id> --ordinal <n> --time <ms|iso> [--data <json|@file>] [--parent <hash>] [--db <location>] [--json]

Records the frame at <ordinal> (-1 = OPEN, then 0, 1, 2, …) and prints its
entry hash and frame root: a turn answers it with both (or use 'tally turn --auto').
Delivering the same frame again is answered as a duplicate.

Options:
  --session <id>    the session (64 hex)
  --ordinal <n>     -1 for the OPEN frame (write --ordinal=-1 or --ordinal open), then 0, 1, …
  --time <t>        frame time: epoch milliseconds or ISO-8601 (2030-01-01T09:30:00Z); never decreases
  --data <json>     frame data: inline JSON or @file
  --parent <hash>   the head you believe you extend (checked when given)
${dbHelp()}

Exit codes: 0 recorded (or duplicate), 1 refused with a diagnostic (printed on stderr:
wrong-session, broken-chain, turn-conflict, not-pending, sealed, malformed-entry), 2 usage, 3 I/O.`,
  options: { session: { type: 'string' }, ordinal: { type: 'string' }, time: { type: 'string' }, data: { type: 'string' }, parent: { type: 'string' }, ...DB_OPTIONS },
  async run({ values, positionals }, io) {
    if (positionals.length > 0) throw new CliError(`frame takes no arguments (got '${positionals[0]}'). Run 'tally frame --help'.`);
    const sessionId = sessionOption(values);
    const ordinal = ordinalOption(values, true) as number;
    const time = timeOption(values);
    const dataArg = str(values, 'data');
    const parentHash = hashOption(values, 'parent');
    const data = dataArg === undefined ? undefined : (jsonArgument(dataArg, io, 'the frame data') as CanonicalValue);
    const json = values['json'] === true;
    return withEngine(values, io, true, async (engine) => {
      const r = await engine.frame({ sessionId, ordinal, time, ...(data === undefined ? {} : { data }), ...(parentHash === undefined ? {} : { parentHash }) });
      if (!r.ok) return refused(io, 'frame', json, r);
      // A redelivered frame may already be answered: hint only what will work now.
      const d = r.duplicate ? await engine.describe(sessionId) : undefined;
      const stillPending = d === undefined || (d.ok && d.pending?.ordinal === r.ordinal);
      const next = stillPending
        ? `next: ${invocation(io)} turn --session ${sessionId} --auto (--text <s> | --file <path> | --stand-down <class>)`
        : d?.ok && d.phase === 'sealed'
          ? 'its turn is already recorded; the session is sealed'
          : `its turn is already recorded; next: ${invocation(io)} frame --session ${sessionId} --ordinal ${d?.ok ? d.nextOrdinal : r.ordinal + 1} --time <ms|iso>`;
      return printed(io, json, r, () => [
        `frame ${r.ordinal} ${r.duplicate ? 'already recorded (duplicate)' : 'recorded'} as entry ${r.index}`,
        `entry hash  ${r.entryHash}`,
        `frame root  ${r.frameRoot}`,
        next,
      ]);
    });
  },
};
