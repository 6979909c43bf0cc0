import { CliError, invocation, str, type Command } from '../command.js';
import { dbHelp, DB_OPTIONS, printed, refused, sessionOption, withEngine } from './session-io.js';
import { counted } from '../../demo/format.js';

export const describeCommand: Command = {
  name: 'describe',
  summary: "Show a session's phase, head, root, pending frame and counts (or list the sessions).",
  help: `Usage: tally describe [--session <id>] [--db <location>] [--json]

With --session: the session's name, phase (awaiting-frame, pending, sealed),
size, head, current RFC 6962 root, the ordinal the next frame must carry, the
pending frame (its entry hash and frame root answer a turn), counts and, once
sealed, the receipt; under a mandate also the referee's quota (used, locked,
free), tickets and verdicts (JSON: extensions.referee). Without --session:
every session in the store.

Options:
  --session <id>    the session (64 hex)
${dbHelp()}

Exit codes: 0 described, 1 refused (wrong-session), 2 usage, 3 I/O.`,
  options: { session: { type: 'string' }, ...DB_OPTIONS },
  async run({ values, positionals }, io) {
    if (positionals.length > 0) throw new CliError(`describe takes no arguments (got '${positionals[0]}'). Run 'tally describe --help'.`);
    const json = values['json'] === true;
    if (str(values, 'session') === undefined) {
      return withEngine(values, io, true, async (engine, store) => {
        const ids = await store.listSessions();
        const list: { sessionId: string; name: string; phase: string; size: number }[] = [];
        for (const id of ids) {
          const d = await engine.describe(id);
          if (d.ok) list.push({ sessionId: id, name: d.name, phase: d.phase, size: d.size });
        }
        return printed(io, json, { ok: true, sessions: list }, () =>
          list.length === 0 ? ['no sessions'] : list.map((s) => `${s.sessionId}  ${s.phase.padEnd(14)}  ${counted(s.size, 'entry').padStart(13)}  ${s.name}`),
        );
      });
    }
    const sessionId = sessionOption(values);
    return withEngine(values, io, true, async (engine) => {
      const d0 = await engine.describe(sessionId);
      if (!d0.ok) return refused(io, 'describe', json, d0);
      // Under a mandate, the referee's picture (quota, tickets, verdicts) joins as extensions.referee.
      const { refereeState } = await import('../../referee/index.js');
      const ref = await refereeState(engine, sessionId);
      const d = ref.ok ? { ...d0, extensions: { ...d0.extensions, referee: ref.referee } } : d0;
      return printed(io, json, d, () => {
        const c = d.counts;
        const lines = [
          `session       ${d.sessionId}`,
          `name          ${d.name}`,
          `phase         ${d.phase}`,
          `entries       ${d.size} (${counted(c.frames, 'frame')}, ${counted(c.turns, 'turn')}: ${c.authored} authored, ${counted(c.standDowns, 'stand-down')})`,
          `head          ${d.head}`,
          `root          ${d.root}`,
        ];
        if (d.lastFrameTime !== undefined) lines.push(`last frame    ${new Date(d.lastFrameTime).toISOString()}`);
        if (d.pending) {
          lines.push(`pending       frame ${d.pending.ordinal} at ${new Date(d.pending.time).toISOString()}`);
          lines.push(`  parent      ${d.pending.entryHash}`);
          lines.push(`  frame root  ${d.pending.frameRoot}`);
          lines.push(`next: ${invocation(io)} turn --session ${d.sessionId} --auto (--text <s> | --file <path> | --stand-down <class>)`);
        } else if (d.phase !== 'sealed') {
          lines.push(`next          frame ${d.nextOrdinal}`);
        }
        if (d.receipt) lines.push(`receipt root  ${d.receipt.receiptRoot} (${counted(d.receipt.size, 'entry')}, sealed)`);
        if (ref.ok) {
          const r = ref.referee;
          const q = r.quota;
          const states: Record<string, number> = {};
          for (const t of r.tickets) states[t.state] = (states[t.state] ?? 0) + 1;
          lines.push(`mandate       ${r.instance}${r.terminated ? ` (terminated at frame ${r.terminated.ordinal})` : r.expired ? ' (expired)' : ''}, expires ${new Date(r.expires_at).toISOString()}`);
          lines.push(`quota         ${q.used} used + ${q.locked} locked of ${q.cap} (${q.free} free); transactions ${q.used_txs} used + ${q.locked_txs} locked of ${q.tx_cap}`);
          lines.push(`tickets       ${r.tickets.length === 0 ? 'none' : Object.entries(states).map(([k, v]) => `${k} ${v}`).join(', ')}`);
          lines.push(`verdicts      ${r.verdicts.judged} judged, ${r.verdicts.allowed} allowed`);
        }
        return lines;
      });
    });
  },
};
