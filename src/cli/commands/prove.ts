import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { slotIndex } from '../../protocol/index.js';
import { bundleFileChunks, indexBundle, peekSessionCheckpoint, turnReceiptFromBundle } from '../../receipt/index.js';
import { CliError, EXIT, println, str, type Command } from '../command.js';
import { progressReporter } from '../progress.js';
import { countOption, readTextFile, verifierKeysFor, writeTextFile } from './checkpoint.js';

/** Why prove needs the engine's checkpoint: said once, in the help and in the usage error. */
const NEEDS_CHECKPOINT =
  "prove signs nothing: pass the engine's signed checkpoint with --checkpoint <file> (the day's sealed receipt, e.g. receipt.note) and the engine's verifier key with --vkey <vkey>. Only the engine signs checkpoints, of its own store (tally checkpoint --db …).";

export const proveCommand: Command = {
  name: 'prove',
  summary: "Write a single-turn receipt: one entry of a bundle, its inclusion proof and the engine's signed checkpoint (signs nothing).",
  help: `Usage: tally prove <bundle.jsonl> (--turn <ordinal> | --entry <n>) --checkpoint <file> --vkey <vkey|file> [--out <file>] [--json]

Writes a single-turn receipt for entry <n> (0-based: line n+1 of the bundle):
one C2SP tlog-proof (https://c2sp.org/tlog-proof) holding the entry's index,
its RFC 6962 inclusion path and the signed checkpoint, with the entry's exact
canonical bytes in its "extra" line. A grader checks it with nothing but the
engine's verifier key: 'tally verify-proof <file> --vkey <vkey>'.

The bundle is verified first (every rule of 'tally verify'). The proof is
made against the engine's signed checkpoint you pass (the day's sealed
receipt, or any earlier checkpoint of the session): it must carry a valid
signature by the pinned --vkey, name the bundle's session, and its root must
be the root of the bundle's first <size> entries. Nothing is signed: a grader
never needs an engine key, and the engine signs checkpoints only of its own
store.

Options:
  --turn <ordinal>     the turn to prove, by the ordinal 'inspect' prints (-1 or
                       open = the OPEN frame's answer, then 0, 1, …): entry 2k+4
  --entry <n>          the entry to prove, by index (0 = genesis, the last = the seal)
  --checkpoint <file>  the engine's signed checkpoint to prove against (required)
  --vkey <vkey|file>   (--key: the old spelling, until the next release)
                       the engine's verifier key (name+keyid+base64), or a file
                       of verifier keys, one per line (required)
  --out <file>         write the receipt to <file> (convention: *.tlog-proof)
                       instead of stdout
  --json               print {ok, index, turn?, size, sessionId, receipt, out?} as JSON

Exit codes: 0 written, 1 the bundle is invalid or the checkpoint is not a
verified checkpoint of this bundle, 2 usage error (also: no --checkpoint or
--vkey), 3 I/O error (bundle, checkpoint, key or output file).`,
  renamedOptions: () => ({ key: 'vkey' }),
  options: { vkey: { type: 'string' }, entry: { type: 'string' }, turn: { type: 'string' }, checkpoint: { type: 'string' }, out: { type: 'string' }, key: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }, io) {
    const path = positionals[0];
    if (!path || positionals.length > 1) throw new CliError("prove takes exactly one bundle path. Run 'tally prove --help'.");
    const turnArg = str(values, 'turn');
    if (turnArg !== undefined && values['entry'] !== undefined) throw new CliError('give either --turn <ordinal> or --entry <n>, not both');
    if (turnArg !== undefined && !/^(open|-1|0|[1-9][0-9]{0,14})$/.test(turnArg)) throw new CliError("--turn must be a turn ordinal: open (or -1), 0, 1, …");
    const turn = turnArg === undefined ? undefined : turnArg === 'open' ? -1 : Number(turnArg);
    // One numbering for a turn: its ordinal names the same entry in every valid chain (protocol/slots.ts).
    const entry = turn === undefined ? countOption(values, 'entry', 0) : slotIndex('turn', turn);
    if (entry === undefined) throw new CliError('--turn <ordinal> or --entry <n> (0-based entry index) is required');
    const cpPath = str(values, 'checkpoint');
    if (cpPath === undefined) throw new CliError(`--checkpoint <file> is required. ${NEEDS_CHECKPOINT}`);
    if (str(values, 'vkey') === undefined) throw new CliError(`--vkey <vkey> is required: a checkpoint is only as good as the key that signed it. ${NEEDS_CHECKPOINT}`);
    const verifiers = await verifierKeysFor(values, io);
    const bundlePath = resolve(io.cwd, path);
    if (!existsSync(bundlePath)) throw new CliError(`cannot read ${bundlePath}: no such file`, EXIT.io, 'TALLY_CLI_IO');
    const signedCheckpoint = readTextFile(cpPath, io, 'the checkpoint');
    const peeked = peekSessionCheckpoint(signedCheckpoint);
    if (!peeked) {
      throw new CliError(`${cpPath} is not a signed Tally session checkpoint (origin <engine>/<session>, size, root, signature lines)`, EXIT.invalid, 'TALLY_CLI_INVALID');
    }
    const json = values['json'] === true;
    const progress = progressReporter(io, 'verifying');
    // Floor 8: the tree keeps subtrees of 256 entries and up, plus the chunks this one proof needs (bounded memory on long days).
    const ix = await indexBundle(bundleFileChunks(bundlePath), { entries: [entry], sizes: [peeked.size], floor: 8, requireSealed: false });
    progress.done();
    if (!ix.ok) {
      if (json) println(io.stdout, JSON.stringify(ix));
      println(io.stderr, `invalid: entry ${ix.index}: ${ix.code}: ${ix.message}`);
      return EXIT.invalid;
    }
    const r = turnReceiptFromBundle(ix, entry, signedCheckpoint, { verifiers });
    if (!r.ok) {
      if (json) println(io.stdout, JSON.stringify(r));
      println(io.stderr, `tally prove: ${r.code}: ${r.message}`);
      return EXIT.invalid;
    }
    const out = str(values, 'out');
    const written = out === undefined ? undefined : writeTextFile(out, r.text, io, 'the receipt');
    if (json) println(io.stdout, JSON.stringify({ ok: true, index: r.index, ...(turn === undefined ? {} : { turn }), size: r.size, sessionId: ix.summary.sessionId, receipt: r.text, ...(written === undefined ? {} : { out: written }) }));
    else if (written === undefined) io.stdout.write(r.text);
    else println(io.stdout, `receipt for ${turn === undefined ? '' : `turn ${turn}, `}entry ${r.index} of ${r.size} (session ${ix.summary.sessionId}) written to ${written}`);
    return EXIT.ok;
  },
};
