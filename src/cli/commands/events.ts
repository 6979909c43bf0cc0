import { CliError, invocation, type Command } from '../command.js';
import { dbHelp, DB_OPTIONS, intOption, printed, refused, sessionOption, withEngine } from './session-io.js';

export const eventsCommand: Command = {
  name: 'events',
  summary: "List a session's entries after a cursor (to follow or resume a day).",
  help: `Usage: tally events --session <id> [--after <n>] [--limit <n>] [--db <location>] [--json]

Prints the entries with index > <after> (default -1: from the genesis), at most
<limit> (default 1000, at most 10000). Resume with --after set to the last
index printed ("next" in the JSON). JSON output holds each entry as recorded.

Options:
  --session <id>    the session (64 hex)
  --after <n>       entry index cursor (default -1)
  --limit <n>       most entries to print (default 1000)
${dbHelp()}

Exit codes: 0 listed, 1 refused (wrong-session), 2 usage, 3 I/O.`,
  options: { session: { type: 'string' }, after: { type: 'string' }, limit: { type: 'string' }, ...DB_OPTIONS },
  async run({ values, positionals }, io) {
    if (positionals.length > 0) throw new CliError(`events takes no arguments (got '${positionals[0]}'). Run 'tally events --help'.`);
    const sessionId = sessionOption(values);
    const after = intOption(values, 'after', -1, Number.MAX_SAFE_INTEGER) ?? -1;
    const limit = intOption(values, 'limit', 1, 10_000) ?? 1000;
    const json = values['json'] === true;
    return withEngine(values, io, true, async (engine) => {
      const { rowOf } = await import('../../demo/timeline.js');
      const { formatTimeline } = await import('../../demo/format.js');
      const r = await engine.events(sessionId, after, limit);
      if (!r.ok) return refused(io, 'events', json, r);
      return printed(io, json, r, () => {
        let time = 0;
        const lines: string[] = [];
        for (const e of r.events) {
          if (e.entry.kind === 'frame') time = e.entry.time;
          for (const l of formatTimeline([rowOf(e.index, e.hash, e.entry, time)])) lines.push(`${String(e.index).padStart(6)}  ${l}`);
        }
        lines.push(r.more ? `more: ${invocation(io)} events --session ${sessionId} --after ${r.next}` : `end of the session so far (phase ${r.phase}, next --after ${r.next})`);
        return lines;
      });
    });
  },
};
