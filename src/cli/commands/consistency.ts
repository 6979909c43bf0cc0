import { existsSync } from 'node:fs';
import { CliError, EXIT, println, str, type Command } from '../command.js';
import { KEY_HELP, engineKeyFor, readTextFile, storeLocation, verifierKeysFor, writeTextFile } from './checkpoint.js';

export const consistencyCommand: Command = {
  name: 'consistency',
  summary: 'Prove or verify that a session only grew between two signed checkpoints (RFC 9162 consistency).',
  help: `Usage: tally consistency prove <older.cp> [<newer.cp>] [--db <location>] [--key <path>] [--name <name>] [--out <file>]
       tally consistency verify <older.cp> <proof> --vkey <vkey|file> [--json]

prove   reads both signed checkpoints (opened with the engine key), checks that
        their roots are those of the session in the database, and writes the
        consistency proof: "old <size>", one base64 hash per line, a blank
        line, then the newer checkpoint verbatim (cosignatures kept). Without
        <newer.cp> a fresh checkpoint over every entry so far is signed.
verify  checks a proof against the older checkpoint you hold: both signed by
        --key, same session, sizes in order, and the RFC 9162 proof links the
        two roots. This is what a monitor runs on each new checkpoint.

Options:
${KEY_HELP}
  --db <location>   the store (prove): a SQLite file or postgres://…
                    (default: $TALLY_DB, else .tally/tally.db)
  --out <file>      prove: write the proof to <file> instead of stdout
  --vkey <vkey>     verify: the engine's verifier key, or a file of keys (--key:
                    its old spelling, accepted until the next release)
  --json            verify: print the result as JSON

Exit codes: 0 proved / consistent, 1 refused / inconsistent (the failing stage
and code are printed), 2 usage error, 3 I/O error.`,
  renamedOptions: (positionals) => (positionals[0] === 'verify' ? { key: 'vkey' } : {}),
  options: { vkey: { type: 'string' }, db: { type: 'string' }, key: { type: 'string' }, name: { type: 'string' }, out: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }, io) {
    const [sub, ...args] = positionals;
    const receipt = await import('../../receipt/index.js');
    if (sub === 'verify') {
      if (args.length !== 2) throw new CliError('consistency verify takes the older checkpoint and the proof file');
      const verifiers = await verifierKeysFor(values, io);
      const older = readTextFile(args[0]!, io, 'the older checkpoint');
      const parsed = receipt.parseConsistencyProof(readTextFile(args[1]!, io, 'the proof'));
      const json = values['json'] === true;
      if (!parsed.ok) {
        if (json) println(io.stdout, JSON.stringify({ ...parsed, stage: 'proof' }));
        println(io.stderr, `invalid: proof: ${parsed.code}: ${parsed.message}`);
        return EXIT.invalid;
      }
      const { oldSize, proof, signedCheckpoint } = parsed.consistencyProof;
      const r = receipt.verifyCheckpointConsistency(older, signedCheckpoint, proof, { verifiers });
      const mismatch = r.ok && r.older.size !== oldSize;
      if (json) println(io.stdout, JSON.stringify(r.ok ? { ok: !mismatch, from: r.older.size, to: r.newer.size, sessionId: r.newer.sessionId, root: r.newer.root } : r));
      if (!r.ok) {
        println(io.stderr, `invalid: ${r.stage === 'consistency' ? '' : `${r.which} checkpoint: `}${r.stage}: ${r.code}: ${r.message}`);
        return EXIT.invalid;
      }
      if (mismatch) {
        println(io.stderr, `invalid: proof: old-size-mismatch: the proof is from size ${oldSize}, the older checkpoint has ${r.older.size}`);
        return EXIT.invalid;
      }
      if (!json) println(io.stdout, `consistent: session ${r.newer.sessionId} grew from ${r.older.size} to ${r.newer.size} entries (root ${r.newer.root})`);
      return EXIT.ok;
    }
    if (sub === 'prove') {
      if (args.length < 1 || args.length > 2) throw new CliError('consistency prove takes the older checkpoint and optionally the newer one');
      const location = storeLocation(values, io);
      if (location === 'memory:') throw new CliError('--db memory: holds no session');
      if (!/^postgres(ql)?:\/\//i.test(location) && !existsSync(location)) throw new CliError(`no database at ${location}`, EXIT.io, 'TALLY_CLI_IO');
      const key = await engineKeyFor(values, io);
      const older = receipt.openSessionCheckpoint(readTextFile(args[0]!, io, 'the older checkpoint'), [key]);
      if (!older.ok) {
        println(io.stderr, `tally consistency: older checkpoint: ${older.stage}: ${older.code}: ${older.message}`);
        return EXIT.invalid;
      }
      const newerText = args[1] === undefined ? undefined : readTextFile(args[1], io, 'the newer checkpoint');
      const newer = newerText === undefined ? undefined : receipt.openSessionCheckpoint(newerText, [key], { sessionId: older.checkpoint.sessionId });
      if (newer !== undefined && !newer.ok) {
        println(io.stderr, `tally consistency: newer checkpoint: ${newer.stage}: ${newer.code}: ${newer.message}`);
        return EXIT.invalid;
      }
      const { openStore } = await import('../../store/index.js');
      const { createEngine } = await import('../../engine.js');
      const store = await openStore(location);
      try {
        const engine = createEngine({ store });
        const notary = receipt.createNotary({ key });
        const sid = older.checkpoint.sessionId;
        const target = newer?.checkpoint.size;
        const p = await notary.consistencyProof(engine, sid, older.checkpoint.size, target);
        if (!p.ok) {
          println(io.stderr, `tally consistency: ${p.code}: ${p.message}`);
          return EXIT.invalid;
        }
        if (p.root1 !== older.checkpoint.root || (newer !== undefined && p.root2 !== newer.checkpoint.root)) {
          println(io.stderr, `tally consistency: root-mismatch: a checkpoint's root is not the root of this session's entries in ${store.name} (a fork: keep both checkpoints as evidence)`);
          return EXIT.invalid;
        }
        let signedCheckpoint = newerText;
        if (signedCheckpoint === undefined) {
          const cp = await notary.issueCheckpoint(engine, sid, p.size2);
          if (!cp.ok) throw new CliError(cp.message, EXIT.internal);
          signedCheckpoint = cp.signedCheckpoint;
        }
        const text = receipt.formatConsistencyProof({ oldSize: p.size1, proof: p.proof, signedCheckpoint });
        const out = str(values, 'out');
        if (out === undefined) io.stdout.write(text);
        else println(io.stdout, `consistency proof ${p.size1} -> ${p.size2} of session ${sid} written to ${writeTextFile(out, text, io, 'the proof')}`);
        return EXIT.ok;
      } finally {
        await store.close();
      }
    }
    throw new CliError(sub === undefined ? "consistency needs a subcommand: prove or verify. Run 'tally consistency --help'." : `unknown consistency subcommand '${sub}' (prove or verify)`);
  },
};
