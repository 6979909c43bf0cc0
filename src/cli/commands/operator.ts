import { CliError, EXIT, println, str, type Command } from '../command.js';
import { dbHelp, DB_OPTIONS, storeLocation } from './session-io.js';

const USAGE = "usage: tally operator acknowledge-failover [--db <location>] [--witness <name>]… [--reason <text>] [--confirm] [--json] (run 'tally operator --help')";

export const operatorCommand: Command = {
  name: 'operator',
  summary: "Operator acts on a store: acknowledge a failover after checking it holds everything the engine signed and witnesses cosigned.",
  help: `Usage: tally operator acknowledge-failover [--db <location>] [--witness <name>]…
                                            [--reason <text>] [--confirm] [--json]

Every signing-log row records the database it was written on (PostgreSQL: the
system identifier, the timeline and the WAL position; SQLite: the store id
and the file). When the store is found on another database or timeline than
the signing log's last row (a failover, a restored backup) and nothing proves
it holds everything signed there, the engine refuses to sign
(TALLY_SIGN_TIMELINE_CHANGED), across restarts, until an operator runs this.

It checks the store against the latest signed checkpoint of every origin,
every signed checkpoint a refusal recorded as lost, and (--witness) the size
each named witness was recorded to have cosigned, and prints what the store
holds and what it lost. Nothing is written without --confirm. With --confirm
it writes each lost signed checkpoint back into the signing log (that size of
that session can then never be signed with another root: the session stays
refused, its lost entries are gone) and records the acknowledgement.

Options:
  --witness <name>    also check what this witness was recorded to cosign (repeatable)
  --reason <text>     the operator's words, kept with the acknowledgement
  --confirm           record the acknowledgement (default: only show)
${dbHelp(18)}

Exit codes: 0 checked (and, with --confirm, acknowledged), 1 the store lost
something (with --confirm: acknowledged all the same, the lost sessions stay
refused), 2 usage, 3 I/O.`,
  options: { witness: { type: 'string', multiple: true }, reason: { type: 'string' }, confirm: { type: 'boolean' }, ...DB_OPTIONS },
  async run({ values, positionals }, io) {
    if (positionals.length !== 1 || positionals[0] !== 'acknowledge-failover') throw new CliError(USAGE);
    const json = values['json'] === true;
    const witnesses = Array.isArray(values['witness']) ? values['witness'].filter((w): w is string => typeof w === 'string') : [];
    const reason = str(values, 'reason') ?? 'acknowledged by the operator';
    if (reason.includes('\n')) throw new CliError('--reason must be one line');
    const location = storeLocation(values, io);
    const { openStore } = await import('../../store/index.js');
    const { checkFailover, acknowledgeFailover } = await import('../../receipt/signing/failover.js');
    const { describePosition } = await import('../../receipt/signing/continuity.js');
    let store;
    try {
      store = await openStore(location);
    } catch (e) {
      throw new CliError(`cannot open the store: ${e instanceof Error ? e.message : String(e)}`, EXIT.io, 'TALLY_CLI_IO');
    }
    try {
      const report = await checkFailover(store, witnesses);
      const confirm = values['confirm'] === true;
      const ack = confirm ? await acknowledgeFailover(store, report, reason) : undefined;
      if (json) {
        println(io.stdout, JSON.stringify({ ok: report.lost.length === 0, current: report.state.current, last: report.state.last ?? null, verdict: report.verdict, checks: report.checks, lost: report.lost, events: report.state.events, acknowledged: ack ?? null }));
      } else {
        const { current, last, events } = report.state;
        println(io.stdout, `store now      ${describePosition(current)}`);
        println(io.stdout, `last signed    ${last ? `${last.origin} size ${last.size}${last.position ? ` on ${describePosition(last.position)}` : ''}` : 'nothing'}`);
        for (const e of events) println(io.stdout, `${e.kind.padEnd(14)} ${new Date(e.at).toISOString()} on ${describePosition(e.position)}: ${e.detail}`);
        println(io.stdout, `signing        ${report.verdict.ok ? `allowed (${report.verdict.proof})` : `refused: ${report.verdict.message}`}`);
        for (const c of report.checks) println(io.stdout, `${c.state.padEnd(14)} ${c.origin} size ${c.size} (${c.by}; the store holds ${c.storeSize})`);
        println(io.stdout, report.lost.length === 0 ? `held           everything (${report.checks.length} checked)` : `LOST           ${report.lost.length} of ${report.checks.length} checked`);
        if (ack) {
          for (const c of ack.restored) println(io.stdout, `restored       ${c.origin} size ${c.size} into the signing log${c.state === 'held' ? '' : ': it stays refused'}`);
          for (const c of ack.equivocated) println(io.stdout, `EQUIVOCATED    ${c.origin} size ${c.size}: another root is already signed there`);
          println(io.stdout, `acknowledged   ${describePosition(current)}`);
        } else {
          println(io.stdout, 'nothing recorded; run again with --confirm to acknowledge');
        }
      }
      return report.lost.length === 0 ? EXIT.ok : EXIT.invalid;
    } catch (e) {
      if (e instanceof CliError) throw e;
      const { TallyError } = await import('../../protocol/index.js');
      if (e instanceof TallyError) throw new CliError(`${e.code}: ${e.shortMessage}`, e.code.startsWith('TALLY_STORE_IO') ? EXIT.io : EXIT.invalid, e.code);
      throw e;
    } finally {
      await store.close();
    }
  },
};
