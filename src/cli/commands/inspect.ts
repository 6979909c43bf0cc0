import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { TimelineFilter } from '../../demo/format.js';
import { CliError, EXIT, println, str, type Command } from '../command.js';
import { progressReporter } from '../progress.js';

export const inspectCommand: Command = {
  name: 'inspect',
  summary: 'Print a readable timeline of a bundle: frames, turns, rulings, diagnostics, the seal.',
  help: `Usage: tally inspect <bundle.jsonl> [--agent <id>] [--action <action>] [--ruling <ruling>] [--json]

Verifies the bundle while reading it and prints the day: every frame (time,
prices, fills), every turn (who asked for what, and the ruling with its code
and reason), the runtime's notices (retries answered as duplicates, refused
submissions with their diagnostic), and the seal. An invalid bundle is shown
up to the first bad entry, then the reason.

Filters (turns; combine them):
  --agent <id>        turns whose intent names this agent_id
  --action <action>   open, modify, close, transfer, note or stand-down
  --ruling <ruling>   admitted, rejected, a ruling code (expired, replayed_nonce, …),
                      a stand-down class, or a diagnostic (turn-conflict, …) / duplicate
                      to list the runtime notices with that outcome
  --json              print {verdict, counts, rows} as JSON

Exit codes: 0 valid, 1 invalid bundle, 2 usage error, 3 file unreadable.`,
  options: { agent: { type: 'string' }, action: { type: 'string' }, ruling: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }, io) {
    const path = positionals[0];
    if (!path || positionals.length > 1) throw new CliError("inspect takes exactly one bundle path. Run 'tally inspect --help'.");
    const full = resolve(io.cwd, path);
    if (!existsSync(full)) throw new CliError(`cannot read ${path}: no such file`, EXIT.io, 'TALLY_CLI_IO');
    const filter: { agent?: string; action?: string; ruling?: string } = {};
    for (const k of ['agent', 'action', 'ruling'] as const) {
      const v = str(values, k);
      if (v !== undefined) filter[k] = v;
    }
    const { readTimeline } = await import('../../demo/timeline.js');
    const { filterRows, formatCounts, formatTimeline } = await import('../../demo/format.js');
    const progress = progressReporter(io, 'reading');
    const t = await readTimeline(full, { onEntry: (v) => progress.tick(v.index + 1) });
    progress.done();
    const rows = filterRows(t.rows, filter as TimelineFilter);
    if (values['json'] === true) {
      println(io.stdout, JSON.stringify({ verdict: t.verdict, counts: t.counts, rows }));
    } else {
      for (const line of formatTimeline(t.rows, filter)) println(io.stdout, line);
      println(io.stdout, '');
      if (Object.keys(filter).length > 0) println(io.stdout, `${rows.length} rows match`);
      for (const line of formatCounts(t.counts)) println(io.stdout, line);
      if (t.verdict.ok) println(io.stdout, `valid: ${t.verdict.size} entries${t.verdict.sealed ? ', sealed' : ', NOT sealed'}; receipt root ${t.verdict.receiptRoot}`);
    }
    if (!t.verdict.ok) {
      println(io.stderr, `invalid: entry ${t.verdict.index}: ${t.verdict.code}: ${t.verdict.message}`);
      return EXIT.invalid;
    }
    return EXIT.ok;
  },
};
