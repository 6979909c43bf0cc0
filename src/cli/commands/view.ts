import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { CliError, EXIT, emit, println, str, type Command } from '../command.js';
import { readTextFile, writeTextFile } from './checkpoint.js';
import { LOG_PROOF_FILE } from './log-binding.js';

export const viewCommand: Command = {
  name: 'view',
  summary: "Write the grader's desk as one offline HTML file with a bundle (and its receipt and key) embedded.",
  help: `Usage: tally view <bundle.jsonl> [--checkpoint <receipt.note|.tlog-proof>] [--vkey <vkey|file>] [--policy <file>] [--log-key <vkey|file> [--log-proof <file>]] [--out <file.html>] [--open] [--json]

Writes the audit page (a single self-contained HTML file, no network) with the
bundle's exact bytes embedded, and prints its path. Opened in a browser, the
page verifies the day there with Tally's own protocol code: the verdict banner
says "verified and pinned" (with --checkpoint and --vkey), "self-consistent but
unpinned", or the first bad entry with the same index and code as tally verify;
with --policy it checks the checkpoint's witness quorum too ("witnessed k of n");
with --log-key it requires the day's engine-log binding, checked by the rule of
tally verify --log-key (a missing or bad one fails the pin with its TALLY_LOG_*
code; the witness policy then applies to the log checkpoint).

Options:
  --checkpoint <f>  the signed receipt note, or a tlog-proof (its checkpoint is used)
  --vkey <vkey|f>   the engine's verifier key (name+keyid+base64), or a file of keys;
                    --key is its old spelling, accepted until the next release
  --policy <file>   a witness policy (Sigsum format, as tally verify --policy)
  --log-key <v|f>   the engine log's verifier key (or a file of keys): the page
                    REQUIRES the day's log binding
  --log-proof <f>   the log binding (default: log-proof.tlog-proof beside --checkpoint)
  --out <file>      where to write (default: <bundle>.html next to the bundle)
  --open            also ask the desktop to open it (xdg-open/open); never required
  --json            print {"ok", "out", "bytes"} (and errors as {"ok":false,"code","message","exit"})

Exit codes: 0 written, 2 usage error, 3 file unreadable or unwritable.`,
  renamedOptions: () => ({ key: 'vkey' }),
  options: { vkey: { type: 'string' }, checkpoint: { type: 'string' }, key: { type: 'string' }, policy: { type: 'string' }, 'log-key': { type: 'string' }, 'log-proof': { type: 'string' }, out: { type: 'string' }, open: { type: 'boolean' } },
  async run({ values, positionals }, io) {
    const path = positionals[0];
    if (!path || positionals.length > 1) throw new CliError("view takes exactly one bundle path. Run 'tally view --help'.");
    const full = resolve(io.cwd, path);
    if (!existsSync(full)) throw new CliError(`cannot read ${path}: no such file`, EXIT.io, 'TALLY_CLI_IO');
    const { loadAuditPage, embedDay } = await import('../../web/index.js');
    const cpPath = str(values, 'checkpoint');
    const keyArg = str(values, 'vkey');
    const policyPath = str(values, 'policy');
    const key = keyArg === undefined ? undefined : existsSync(resolve(io.cwd, keyArg)) ? readTextFile(keyArg, io, 'the key file') : keyArg;
    const logKeyArg = str(values, 'log-key');
    if (logKeyArg === undefined && str(values, 'log-proof') !== undefined) throw new CliError("--log-proof needs --log-key <vkey>: a log binding is only as good as the log key that signed it");
    const logKey = logKeyArg === undefined ? undefined : existsSync(resolve(io.cwd, logKeyArg)) ? readTextFile(logKeyArg, io, 'the log key file') : logKeyArg;
    // As tally verify --log-key: the binding named, else the one beside the checkpoint; none there is for the page to refuse.
    const logProofPath = str(values, 'log-proof') ?? (logKey === undefined || cpPath === undefined ? undefined : join(dirname(resolve(io.cwd, cpPath)), LOG_PROOF_FILE));
    const logProof = logProofPath === undefined || (str(values, 'log-proof') === undefined && !existsSync(logProofPath)) ? undefined : readTextFile(logProofPath, io, 'the log binding');
    const html = embedDay(loadAuditPage(), {
      name: basename(full),
      bundle: new Uint8Array(readFileSync(full)),
      ...(cpPath === undefined ? {} : { checkpoint: readTextFile(cpPath, io, 'the checkpoint') }),
      ...(key === undefined ? {} : { key }),
      ...(policyPath === undefined ? {} : { policy: readTextFile(policyPath, io, 'the witness policy') }),
      ...(logKey === undefined ? {} : { logKey }),
      ...(logProof === undefined ? {} : { logProof }),
    });
    const out = writeTextFile(str(values, 'out') ?? `${full.replace(/\.jsonl$/, '')}.html`, html, io, 'the page');
    emit(io, values, { ok: true, out, bytes: Buffer.byteLength(html) }, () => [out]);
    if (values['open'] === true) {
      const { spawn } = await import('node:child_process');
      const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
      try {
        const child = spawn(opener, [out], { detached: true, stdio: 'ignore' });
        child.on('error', () => println(io.stderr, `could not run ${opener}: open ${out} in a browser`));
        child.unref();
      } catch {
        println(io.stderr, `could not run ${opener}: open ${out} in a browser`);
      }
    }
    return EXIT.ok;
  },
};
