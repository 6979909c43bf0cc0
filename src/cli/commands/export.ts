import { createWriteStream, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import { counted } from '../../demo/format.js';
import type { Engine } from '../../session/index.js';
import { CliError, EXIT, ioProblem, println, str, type Command } from '../command.js';
import { KEY_HELP, engineKeyFor, writeTextFile } from './checkpoint.js';
import { dbHelp, DB_OPTIONS, refused, sessionOption, withEngine } from './session-io.js';

/** The entry indexes of every turn of a session, read page by page. */
async function turnIndexes(engine: Engine, sessionId: string): Promise<number[]> {
  const out: number[] = [];
  let after = -1;
  for (;;) {
    const r = await engine.events(sessionId, after, 1000);
    if (!r.ok) return out;
    for (const e of r.events) if (e.entry.kind === 'turn') out.push(e.index);
    if (!r.more) return out;
    after = r.next;
  }
}

export const exportCommand: Command = {
  name: 'export',
  summary: 'Export a session from any store: the bundle, the seal receipt, a signed checkpoint and (optionally) every turn receipt.',
  help: `Usage: tally export --session <id> --out <dir> [--turn-receipts] [--unsealed] [--db <location>] [--key <path>] [--name <name>] [--json]

Writes what a grader needs into <dir> (created if missing):
  bundle.jsonl        every entry, one canonical JSON line each ('tally verify')
  receipt.json        the seal receipt: session, size, receipt root, head, engine, verifier key
  receipt.note        a C2SP checkpoint over every entry, signed with the engine key
  engine.vkey         the engine's verifier key graders pin
  turns/<n>.tlog-proof  with --turn-receipts: a single-turn receipt for every turn
                      entry n, proved against receipt.note ('tally verify-proof')
The session must be sealed unless --unsealed (then receipt.json holds the
current size, root and head, and "sealed": false).

Options:
  --session <id>      the session (64 hex)
  --out <dir>         the output directory
  --turn-receipts     also write one receipt per turn
  --unsealed          export a session that is not sealed yet
${KEY_HELP}
${dbHelp(18)}

Exit codes: 0 written, 1 refused (unknown session, not sealed), 2 usage error,
3 I/O error (database, key file, output directory).`,
  options: { session: { type: 'string' }, out: { type: 'string' }, 'turn-receipts': { type: 'boolean' }, unsealed: { type: 'boolean' }, key: { type: 'string' }, name: { type: 'string' }, ...DB_OPTIONS },
  async run({ values, positionals }, io) {
    if (positionals.length > 0) throw new CliError(`export takes no arguments (got '${positionals[0]}'). Run 'tally export --help'.`);
    const sessionId = sessionOption(values);
    const outArg = str(values, 'out');
    if (outArg === undefined || outArg === '') throw new CliError('--out <dir> is required');
    const out = resolve(io.cwd, outArg);
    const json = values['json'] === true;
    const key = await engineKeyFor(values, io);
    return withEngine(values, io, true, async (engine) => {
      const d = await engine.describe(sessionId);
      if (!d.ok) return refused(io, 'export', json, d);
      if (d.phase !== 'sealed' && values['unsealed'] !== true) {
        throw new CliError(`the session is not sealed (phase ${d.phase}): seal it with tally finalize, or pass --unsealed`, EXIT.invalid, 'TALLY_CLI_NOT_SEALED');
      }
      try {
        mkdirSync(values['turn-receipts'] === true ? join(out, 'turns') : out, { recursive: true });
      } catch (e) {
        throw new CliError(`cannot create ${out}: ${ioProblem(e as NodeJS.ErrnoException)}`, EXIT.io, 'TALLY_CLI_IO');
      }
      // The bundle, streamed: memory stays bounded on long days.
      const bundle = join(out, 'bundle.jsonl');
      const stream = createWriteStream(bundle);
      try {
        for await (const line of engine.exportEntries(sessionId)) {
          if (!stream.write(line)) await once(stream, 'drain');
          if (!stream.write('\n')) await once(stream, 'drain');
        }
        stream.end();
        await once(stream, 'finish');
      } catch (e) {
        stream.destroy();
        const err = e as NodeJS.ErrnoException;
        if (typeof err.code === 'string' && /^E[A-Z]+$/.test(err.code)) throw new CliError(`cannot write ${bundle}: ${ioProblem(err)}`, EXIT.io, 'TALLY_CLI_IO');
        throw e;
      }
      const { createNotary } = await import('../../receipt/index.js');
      const notary = createNotary({ key });
      const cp = await notary.issueCheckpoint(engine, sessionId);
      if (!cp.ok) {
        println(io.stderr, `tally export: ${cp.code}: ${cp.message}`);
        return EXIT.invalid;
      }
      const receipt = { sessionId, size: d.size, receiptRoot: d.receipt?.receiptRoot ?? d.root, head: d.head, sealed: d.phase === 'sealed', engine: notary.name, verifierKey: notary.verifierKey };
      writeTextFile(join(out, 'receipt.json'), JSON.stringify(receipt, null, 2) + '\n', io, 'the receipt');
      writeTextFile(join(out, 'receipt.note'), cp.signedCheckpoint, io, 'the checkpoint');
      writeTextFile(join(out, 'engine.vkey'), notary.verifierKey + '\n', io, 'the verifier key');
      const turnFiles: string[] = [];
      if (values['turn-receipts'] === true) {
        for (const i of await turnIndexes(engine, sessionId)) {
          const r = await notary.turnReceipt(engine, sessionId, i, { signedCheckpoint: cp.signedCheckpoint });
          if (!r.ok) {
            println(io.stderr, `tally export: entry ${i}: ${r.code}: ${r.message}`);
            return EXIT.invalid;
          }
          turnFiles.push(writeTextFile(join(out, 'turns', `${i}.tlog-proof`), r.text, io, 'a turn receipt'));
        }
      }
      if (json) {
        println(io.stdout, JSON.stringify({ ok: true, dir: out, ...receipt, files: { bundle, receipt: join(out, 'receipt.json'), checkpoint: join(out, 'receipt.note'), verifierKey: join(out, 'engine.vkey'), turnReceipts: turnFiles } }));
      } else {
        println(io.stdout, `exported session ${sessionId} (${counted(d.size, 'entry')}${receipt.sealed ? ', sealed' : ', NOT sealed'}) to ${out}`);
        println(io.stdout, `files         bundle.jsonl, receipt.json, receipt.note, engine.vkey${turnFiles.length > 0 ? `, turns/ (${counted(turnFiles.length, 'turn receipt')})` : ''}`);
        println(io.stdout, `receipt root  ${receipt.receiptRoot}`);
        println(io.stdout, `verifier key  ${notary.verifierKey}`);
      }
      return EXIT.ok;
    });
  },
};
