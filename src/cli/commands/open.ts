import { str, CliError, invocation, type Command } from '../command.js';
import { dbHelp, DB_OPTIONS, jsonArgument, printed, refused, storeLocation, withEngine } from './session-io.js';

export const openCommand: Command = {
  name: 'open',
  summary: 'Open a session from a spec (the same spec is always the same session) and print its id.',
  help: `Usage: tally open (--spec <file|json|@file> | --name <name>) [--db <location>] [--json]

Seals the spec in the session's genesis entry and prints the session id (the
genesis hash). Opening the same spec again returns the same id ("already
open"; "exists and is sealed" when that day was sealed, and --json says
"sealed": true): put what makes a day unique (a date, a run id) into the spec.
A spec may register signers ("agents": {"<agent_id>": "0x<address>"}), intent
options ("intent": {...}) and a mandate ("mandate": {...}, agent-tally/referee);
intent-carrying turns are then ruled on (and refereed under the mandate).

Options:
  --spec <spec>     the spec: a JSON file path, @file, or inline JSON ({"name": …})
  --name <name>     shorthand for --spec '{"name": "<name>"}'
${dbHelp()}

Exit codes: 0 opened, 1 the spec was refused (malformed-entry), 2 usage error, 3 store or file I/O error.`,
  options: { spec: { type: 'string' }, name: { type: 'string' }, ...DB_OPTIONS },
  async run({ values, positionals }, io) {
    if (positionals.length > 0) throw new CliError(`open takes no arguments (got '${positionals[0]}'). Run 'tally open --help'.`);
    const specArg = str(values, 'spec');
    const name = str(values, 'name');
    if ((specArg === undefined) === (name === undefined)) throw new CliError('give exactly one of --spec <file|json> or --name <name>');
    const spec = specArg !== undefined ? jsonArgument(specArg, io, 'the spec', true) : { name };
    const json = values['json'] === true;
    return withEngine(values, io, false, async (engine) => {
      const r = await engine.open(spec);
      if (!r.ok) return refused(io, 'open', json, r);
      // The same spec is the same session: when that session is already sealed, say so now, not with a refusal at the next frame.
      const d = r.created ? undefined : await engine.describe(r.sessionId);
      const sealed = d !== undefined && d.ok && d.phase === 'sealed';
      return printed(io, json, { ...r, ...(r.created ? {} : { sealed }), db: storeLocation(values, io) }, () =>
        sealed
          ? [
              `session ${r.sessionId} (exists and is sealed)`,
              `this spec's session exists and is sealed: put a date or run id in the spec to open a new day (this one is final: ${invocation(io)} export --session ${r.sessionId} --out <dir>)`,
            ]
          : [
              `session ${r.sessionId} (${r.created ? 'created' : 'already open'})`,
              `next: ${invocation(io)} frame --session ${r.sessionId} --ordinal open --time <ms|iso> [--data <json>]`,
            ],
      );
    });
  },
};
