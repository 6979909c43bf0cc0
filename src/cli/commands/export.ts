import { createWriteStream, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import { counted } from '../../demo/format.js';
import type { Engine } from '../../session/index.js';
import { TallyError } from '../../protocol/index.js';
import type { EngineKey } from '../../receipt/index.js';
import type { CosignatureStore, TranscriptStore } from '../../store/index.js';
import { CliError, EXIT, ioProblem, println, str, type Command, type CommandIO } from '../command.js';
import { KEY_HELP, engineKeyFor, writeTextFile } from './checkpoint.js';
import { LOG_PROOF_FILE, LOG_VKEY_FILE } from './log-binding.js';
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
  help: `Usage: tally export --session <id> --out <dir> [--turn-receipts] [--unsealed] [--log-key <file>] [--db <location>] [--key <path>] [--name <name>] [--json]

Writes what a grader needs into <dir> (created if missing):
  bundle.jsonl        every entry, one canonical JSON line each ('tally verify')
  receipt.json        the seal receipt: session, size, receipt root, head, engine, verifier key
  receipt.note        a C2SP checkpoint over every entry, signed with the engine key
  engine.vkey         the engine's verifier key graders pin
  turns/<n>.tlog-proof  with --turn-receipts: a single-turn receipt for every turn
                      entry n, proved against receipt.note ('tally verify-proof')
  log-proof.tlog-proof  with --log-key: the log binding, a C2SP tlog-proof that
                      receipt.note's checkpoint is a leaf of the engine log, in the
                      latest log checkpoint with the witnesses' cosignatures the
                      store kept for it, or one signed now if that does not hold
                      it yet (docs/PROTOCOL.md §15.5; 'tally verify --log-key
                      log.vkey' requires it)
  log.vkey            with --log-key: the engine log's verifier key
The session must be sealed unless --unsealed (then receipt.json holds the
current size, root and head, and "sealed": false).

Options:
  --session <id>      the session (64 hex)
  --out <dir>         the output directory
  --turn-receipts     also write one receipt per turn
  --unsealed          export a session that is not sealed yet
  --log-key <file>    the engine log's key file (default $TALLY_LOG_KEY when set;
                      never created here: the log's key is the one 'tally serve
                      --log-key' signs with)
${KEY_HELP}
${dbHelp(18)}

Exit codes: 0 written, 1 refused (unknown session, not sealed), 2 usage error,
3 I/O error (database, key file, output directory).`,
  options: { session: { type: 'string' }, out: { type: 'string' }, 'turn-receipts': { type: 'boolean' }, unsealed: { type: 'boolean' }, 'log-key': { type: 'string' }, key: { type: 'string' }, name: { type: 'string' }, ...DB_OPTIONS },
  async run({ values, positionals }, io) {
    if (positionals.length > 0) throw new CliError(`export takes no arguments (got '${positionals[0]}'). Run 'tally export --help'.`);
    const sessionId = sessionOption(values);
    const outArg = str(values, 'out');
    if (outArg === undefined || outArg === '') throw new CliError('--out <dir> is required');
    const out = resolve(io.cwd, outArg);
    const json = values['json'] === true;
    const key = await engineKeyFor(values, io);
    const logKey = await exportLogKey(values, io);
    return withEngine(values, io, true, async (engine, store) => {
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
      const logFiles: string[] = [];
      if (logKey !== undefined) {
        const text = await exportLogBinding(store, logKey, cp);
        logFiles.push(writeTextFile(join(out, LOG_PROOF_FILE), text, io, 'the log binding'));
        logFiles.push(writeTextFile(join(out, LOG_VKEY_FILE), logKey.verifierKey + '\n', io, "the log's verifier key"));
      }
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
        println(io.stdout, JSON.stringify({ ok: true, dir: out, ...receipt, files: { bundle, receipt: join(out, 'receipt.json'), checkpoint: join(out, 'receipt.note'), verifierKey: join(out, 'engine.vkey'), turnReceipts: turnFiles, ...(logFiles.length === 0 ? {} : { logProof: logFiles[0], logVerifierKey: logFiles[1] }) } }));
      } else {
        println(io.stdout, `exported session ${sessionId} (${counted(d.size, 'entry')}${receipt.sealed ? ', sealed' : ', NOT sealed'}) to ${out}`);
        println(io.stdout, `files         bundle.jsonl, receipt.json, receipt.note, engine.vkey${logFiles.length > 0 ? `, ${LOG_PROOF_FILE}, ${LOG_VKEY_FILE}` : ''}${turnFiles.length > 0 ? `, turns/ (${counted(turnFiles.length, 'turn receipt')})` : ''}`);
        println(io.stdout, `receipt root  ${receipt.receiptRoot}`);
        println(io.stdout, `verifier key  ${notary.verifierKey}`);
        if (logKey !== undefined) println(io.stdout, `log key       ${logKey.verifierKey}`);
      }
      return EXIT.ok;
    });
  },
};

/** The log key of `--log-key <file>` (else `$TALLY_LOG_KEY`), never created; `undefined` when neither is given. */
async function exportLogKey(values: Record<string, unknown>, io: CommandIO): Promise<EngineKey | undefined> {
  const path = str(values, 'log-key') ?? (io.env['TALLY_LOG_KEY'] || undefined);
  if (path === undefined) return undefined;
  const { loadLogKey } = await import('../../log/index.js');
  try {
    return await loadLogKey({ path, create: false, env: io.env, cwd: io.cwd });
  } catch (e) {
    if (e instanceof TallyError) throw new CliError(`log key: ${e.shortMessage}${e.details ? ` (${e.details})` : ''}`, EXIT.io, e.code);
    throw e;
  }
}

/**
 * The log binding of the exported checkpoint (§15.5): in the latest log
 * checkpoint when it already holds the leaf — with the witnesses'
 * cosignatures the store kept for it (§15.6) — else in one signed now.
 */
async function exportLogBinding(store: TranscriptStore, key: EngineKey, cp: { readonly origin: string; readonly size: number; readonly root: string }): Promise<string> {
  const [{ EngineLog, findCheckpointLeaf, logBinding }, { hasEngineLog }] = await Promise.all([import('../../log/index.js'), import('../../store/index.js')]);
  if (!hasEngineLog(store)) throw new CliError(`--log-key: the store ${store.name} keeps no engine log`, EXIT.usage);
  try {
    const log = new EngineLog({ store, key });
    await log.sync();
    const latest = await log.latest();
    if (latest === undefined || (await findCheckpointLeaf(log, cp, latest.size)) < 0) return await logBinding(log, cp);
    const st = store as Partial<CosignatureStore>;
    const lines = typeof st.cosignatures === 'function' ? (await st.cosignatures(latest.origin, latest.size)).filter((c) => c.root === latest.root).map((c) => c.line) : [];
    const { addSignatureLines } = await import('../../witness/index.js');
    return await logBinding(log, cp, lines.length === 0 ? latest : { ...latest, signedCheckpoint: addSignatureLines(latest.signedCheckpoint, lines) });
  } catch (e) {
    if (e instanceof TallyError && (e.code.startsWith('TALLY_LOG_') || e.code.startsWith('TALLY_SIGN_'))) throw new CliError(`the log binding: ${e.shortMessage}${e.details ? ` (${e.details})` : ''}`, EXIT.invalid, e.code);
    throw e;
  }
}
