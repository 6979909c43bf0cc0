import { resolve } from 'node:path';
import type { TimelineFilter } from '../../demo/format.js';
import { INTENT_RULING_CATALOGUE } from '../../intent/catalogue.js';
import { FAILURE_CLASSES, SESSION_DIAGNOSTICS } from '../../protocol/index.js';
import { REFEREE_RULING_CATALOGUE } from '../../referee/catalogue.js';
import { JUDGE_FAILURES } from '../../referee/judge.js';
import { CliError, didYouMean, EXIT, inputFile, println, str, type Command } from '../command.js';
import { progressReporter } from '../progress.js';
import { counted } from '../../demo/format.js';
import { verdictLine } from '../pins.js';

/** What `--action` filters on. */
const ACTIONS: readonly string[] = ['open', 'modify', 'close', 'transfer', 'note', 'stand-down'];

/** Every value `--ruling` accepts: outcomes, every catalogued ruling code, stand-down classes, diagnostics. */
function rulingValues(): string[] {
  const codes = [...INTENT_RULING_CATALOGUE, ...REFEREE_RULING_CATALOGUE].map((r) => r.code);
  return [...new Set(['admitted', 'rejected', 'stand-down', ...FAILURE_CLASSES, ...codes, ...JUDGE_FAILURES, ...SESSION_DIAGNOSTICS, 'duplicate'])];
}

export const inspectCommand: Command = {
  name: 'inspect',
  summary: 'Print a readable timeline of a bundle: frames, turns, rulings, diagnostics, the seal.',
  help: `Usage: tally inspect <bundle.jsonl> [--agent <id>] [--action <action>] [--ruling <ruling>] [--wide] [--json]

Verifies the bundle while reading it and prints the day: every frame (time,
prices, fills), every turn (who asked for what, and the ruling with its code
and reason; for a panel of judges that did not allow unanimously, who said
what), the runtime's notices (retries answered as duplicates, refused
submissions with their diagnostic), and the seal; then the counts: rejections
by code, panel verdicts by split, the judges' answers by outcome. An invalid
bundle is shown up to the first bad entry, then the reason.

Filters (turns; combine them):
  --agent <id>        turns whose intent names this agent_id (an id the day does
                      not know is named on stderr with the agents it does know)
  --action <action>   open, modify, close, transfer, note or stand-down
  --ruling <ruling>   admitted, rejected, a ruling code (expired, replayed_nonce, …),
                      a stand-down class, or a diagnostic (turn-conflict, …) / duplicate
                      to list the runtime notices with that outcome; a panel judge's
                      answer code (judge_denied, …) or failure (timeout, …) matches too
  --wide              show reasons and texts whole (default: cut to fit a line)
  --json              print {verdict, counts, rows, agents} as JSON

Exit codes: 0 valid, 1 invalid bundle, 2 usage error, 3 file unreadable.`,
  options: { wide: { type: 'boolean' }, agent: { type: 'string' }, action: { type: 'string' }, ruling: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }, io) {
    const path = positionals[0];
    if (!path || positionals.length > 1) throw new CliError("inspect takes exactly one bundle path. Run 'tally inspect --help'.");
    const full = resolve(io.cwd, path);
    inputFile(full, io, 'the bundle');
    const filter: { agent?: string; action?: string; ruling?: string } = {};
    for (const k of ['agent', 'action', 'ruling'] as const) {
      const v = str(values, k);
      if (v !== undefined) filter[k] = v;
    }
    if (filter.action !== undefined && !ACTIONS.includes(filter.action)) throw new CliError(`--action must be one of ${ACTIONS.join(', ')} (got '${filter.action}')`);
    if (filter.ruling !== undefined && !rulingValues().includes(filter.ruling)) {
      const guess = didYouMean(filter.ruling, rulingValues());
      throw new CliError(`--ruling must be admitted, rejected, stand-down, duplicate, a ruling code, a stand-down class or a diagnostic (got '${filter.ruling}'${guess === undefined ? '' : `; did you mean ${guess}?`}); allowed: ${rulingValues().join(', ')}`);
    }
    const { readTimeline } = await import('../../demo/timeline.js');
    const { filterRows, formatCounts, formatTimeline } = await import('../../demo/format.js');
    const progress = progressReporter(io, 'reading');
    const t = await readTimeline(full, { onEntry: (v) => progress.tick(v.index + 1) });
    progress.done();
    const rows = filterRows(t.rows, filter as TimelineFilter);
    // The agents the day knows: the spec's registry and every agent a turn named.
    const agents = [...new Set(t.rows.flatMap((r) => ('agents' in r && Array.isArray(r.agents) ? (r.agents as string[]) : 'agent' in r && typeof r.agent === 'string' ? [r.agent] : [])))].sort();
    const unknownAgent = filter.agent !== undefined && !agents.includes(filter.agent);
    if (values['json'] === true) {
      println(io.stdout, JSON.stringify({ verdict: t.verdict, counts: t.counts, rows, agents }));
    } else {
      if (unknownAgent) {
        const guess = didYouMean(filter.agent!, agents);
        println(io.stderr, `tally inspect: this day knows no agent '${filter.agent}'${guess === undefined ? '' : ` (did you mean '${guess}'?)`}; its agents: ${agents.length === 0 ? 'none (no turn names an agent)' : agents.join(', ')}`);
      }
      for (const line of formatTimeline(t.rows, filter, { wide: values['wide'] === true })) println(io.stdout, line);
      println(io.stdout, '');
      if (Object.keys(filter).length > 0) println(io.stdout, `${rows.length} ${rows.length === 1 ? 'row matches' : 'rows match'}`);
      for (const line of formatCounts(t.counts)) println(io.stdout, line);
      if (t.verdict.ok) println(io.stdout, `${verdictLine({})}: ${counted(t.verdict.size, 'entry')}${t.verdict.sealed ? ', sealed' : ', NOT sealed'}; receipt root ${t.verdict.receiptRoot}`);
    }
    if (!t.verdict.ok) {
      println(io.stderr, `invalid: entry ${t.verdict.index}: ${t.verdict.code}: ${t.verdict.message}`);
      return EXIT.invalid;
    }
    return EXIT.ok;
  },
};
