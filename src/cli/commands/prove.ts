import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { bundleFileChunks, indexBundle, peekSessionCheckpoint, signBundleCheckpoint, turnReceiptFromBundle } from '../../receipt/index.js';
import { CliError, EXIT, println, str, type Command } from '../command.js';
import { progressReporter } from '../progress.js';
import { KEY_HELP, countOption, engineKeyFor, readTextFile, writeTextFile } from './checkpoint.js';

export const proveCommand: Command = {
  name: 'prove',
  summary: 'Write a single-turn receipt: one entry of a bundle, its inclusion proof and the signed checkpoint.',
  help: `Usage: tally prove <bundle.jsonl> --entry <n> [--checkpoint <file>] [--out <file>] [--key <path>] [--name <name>] [--json]

Writes a single-turn receipt for entry <n> (0-based: line n+1 of the bundle):
one C2SP tlog-proof (https://c2sp.org/tlog-proof) holding the entry's index,
its RFC 6962 inclusion path and the signed checkpoint, with the entry's exact
canonical bytes in its "extra" line. A grader checks it with nothing but the
engine's verifier key: 'tally verify-proof <file> --key <vkey>'.

The bundle is verified first (every rule of 'tally verify'). With --checkpoint
the proof is made against that signed checkpoint (the day's sealed receipt,
or any earlier checkpoint of the session), which must be a state of this
bundle. Without it, a checkpoint over the whole bundle is signed with the
engine key, which must already exist.

Options:
  --entry <n>          the entry to prove (0 = genesis, the last = the seal)
  --checkpoint <file>  prove against this signed checkpoint
  --out <file>         write the receipt to <file> (convention: *.tlog-proof)
                       instead of stdout
${KEY_HELP}
  --json               print {ok, index, size, sessionId, receipt, out?} as JSON

Exit codes: 0 written, 1 the bundle is invalid or the checkpoint is not of this
bundle, 2 usage error, 3 I/O error (bundle, checkpoint, key or output file).`,
  options: { entry: { type: 'string' }, checkpoint: { type: 'string' }, out: { type: 'string' }, key: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }, io) {
    const path = positionals[0];
    if (!path || positionals.length > 1) throw new CliError("prove takes exactly one bundle path. Run 'tally prove --help'.");
    const entry = countOption(values, 'entry', 0);
    if (entry === undefined) throw new CliError('--entry <n> is required (0-based entry index)');
    const bundlePath = resolve(io.cwd, path);
    if (!existsSync(bundlePath)) throw new CliError(`cannot read ${bundlePath}: no such file`, EXIT.io, 'TALLY_CLI_IO');
    const cpPath = str(values, 'checkpoint');
    let signedCheckpoint = cpPath === undefined ? undefined : readTextFile(cpPath, io, 'the checkpoint');
    if (signedCheckpoint !== undefined && !peekSessionCheckpoint(signedCheckpoint)) {
      throw new CliError(`${cpPath} is not a signed Tally session checkpoint (origin <engine>/<session>, size, root, signature lines)`, EXIT.invalid, 'TALLY_CLI_INVALID');
    }
    const json = values['json'] === true;
    const progress = progressReporter(io, 'verifying');
    const ix = await indexBundle(bundleFileChunks(bundlePath), { entries: [entry], requireSealed: false });
    progress.done();
    if (!ix.ok) {
      if (json) println(io.stdout, JSON.stringify(ix));
      println(io.stderr, `invalid: entry ${ix.index}: ${ix.code}: ${ix.message}`);
      return EXIT.invalid;
    }
    if (signedCheckpoint === undefined) signedCheckpoint = signBundleCheckpoint(ix, await engineKeyFor(values, io, false)).signedCheckpoint;
    const r = turnReceiptFromBundle(ix, entry, signedCheckpoint);
    if (!r.ok) {
      if (json) println(io.stdout, JSON.stringify(r));
      println(io.stderr, `tally prove: ${r.code}: ${r.message}`);
      return EXIT.invalid;
    }
    const out = str(values, 'out');
    const written = out === undefined ? undefined : writeTextFile(out, r.text, io, 'the receipt');
    if (json) println(io.stdout, JSON.stringify({ ok: true, index: r.index, size: r.size, sessionId: ix.summary.sessionId, receipt: r.text, ...(written === undefined ? {} : { out: written }) }));
    else if (written === undefined) io.stdout.write(r.text);
    else println(io.stdout, `receipt for entry ${r.index} of ${r.size} (session ${ix.summary.sessionId}) written to ${written}`);
    return EXIT.ok;
  },
};
