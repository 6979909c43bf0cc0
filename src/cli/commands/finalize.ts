import { CliError, str, type Command } from '../command.js';
import { dbHelp, DB_OPTIONS, jsonArgument, printed, refused, sessionOption, withEngine } from './session-io.js';
import { counted } from '../../demo/format.js';

export const finalizeCommand: Command = {
  name: 'finalize',
  summary: 'Seal a session and print its receipt (size, receipt root, head).',
  help: `Usage: tally finalize --session <id> [--artifacts <json|@file>] [--db <location>] [--json]

Appends the seal (it commits to every entry by its RFC 6962 root) and prints
the receipt: pin the receipt root and size to verify the exported day later
('tally verify <bundle> --root <root>'). Sealing again with the same artifacts
returns the same receipt; the session takes nothing new after the seal.
A pending frame must be answered (or stood down) first.

Options:
  --session <id>        the session (64 hex)
  --artifacts <json>    a JSON object sealed with the day (inline or @file)
${dbHelp(22)}

Exit codes: 0 sealed (or already sealed with the same artifacts), 1 refused with a
diagnostic (not-pending, sealed, wrong-session, malformed-entry), 2 usage, 3 I/O.`,
  options: { session: { type: 'string' }, artifacts: { type: 'string' }, ...DB_OPTIONS },
  async run({ values, positionals }, io) {
    if (positionals.length > 0) throw new CliError(`finalize takes no arguments (got '${positionals[0]}'). Run 'tally finalize --help'.`);
    const sessionId = sessionOption(values);
    const a = str(values, 'artifacts');
    const artifacts = a === undefined ? undefined : jsonArgument(a, io, 'the artifacts');
    const json = values['json'] === true;
    return withEngine(values, io, true, async (engine) => {
      const r = await engine.finalize(sessionId, artifacts);
      if (!r.ok) return refused(io, 'finalize', json, r);
      const x = r.receipt;
      return printed(io, json, r, () => [
        `sealed${r.duplicate ? ' (already, with the same artifacts)' : ''}: ${counted(x.size, 'entry')}`,
        `receipt root  ${x.receiptRoot}`,
        `head          ${x.head}`,
      ]);
    });
  },
};
