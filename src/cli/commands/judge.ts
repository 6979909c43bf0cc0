// The judge service loads only when `tally judge serve` runs.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CliError, EXIT, emit, jsonMode, println, str, type Command, type CommandIO } from '../command.js';
import { TIMEOUT_OPTIONS, timeoutHelp, timeoutsFromOptions } from '../http-options.js';
import { serveUntilSignal } from '../listen.js';

const KEY = /^0x[0-9a-fA-F]{64}$/;

function keyPath(values: Record<string, unknown>, io: CommandIO, sub: string): string {
  const path = str(values, 'key') ?? (io.env['TALLY_JUDGE_KEY_FILE'] || undefined);
  if (path === undefined) throw new CliError(`tally judge ${sub} needs --key <file> (or $TALLY_JUDGE_KEY_FILE): a file holding the 0x-prefixed 32-byte hex secp256k1 key the service signs with`);
  return path;
}

/**
 * `tally judge keygen`: creates the judge's key file (owner-only, never
 * replaced) when it does not exist, and prints its signer address either way
 * (the address a mandate's judges or panel names), as witness keygen does.
 */
async function keygen(values: Record<string, unknown>, io: CommandIO): Promise<number> {
  const path = resolve(io.cwd, keyPath(values, io, 'keygen'));
  const { privateKeyToAccount, generatePrivateKey } = await import('viem/accounts');
  const { mkdir, writeFile } = await import('node:fs/promises');
  const { dirname } = await import('node:path');
  let created = false;
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    // 'wx': created only if absent, so a key already there is never replaced (not even by a race).
    await writeFile(path, `${generatePrivateKey()}\n`, { flag: 'wx', mode: 0o600 });
    created = true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new CliError(`cannot write the judge key ${path}: ${(e as Error).message}`, EXIT.io, 'TALLY_CLI_IO');
  }
  const address = privateKeyToAccount(await readSecpKeyFile(path, io)).address.toLowerCase();
  if (created) println(io.stderr, `tally judge: created judge key ${path} (owner-only); keep it secret, name the address below in a mandate's judges or panel`);
  return emit(io, values, { ok: true, created, path, address }, () => [address]);
}

/** A file holding exactly one 0x-prefixed 32-byte hex secp256k1 key (and an optional final newline): usage error otherwise, I/O error when unreadable. */
export async function readSecpKeyFile(path: string, io: CommandIO): Promise<`0x${string}`> {
  let text: string;
  try {
    text = await readFile(resolve(io.cwd, path), 'utf8');
  } catch (e) {
    throw new CliError(`cannot read the judge key ${path}: ${(e as Error).message}`, EXIT.io, 'TALLY_CLI_IO');
  }
  const key = text.replace(/\r?\n$/, '');
  if (!KEY.test(key)) throw new CliError(`${path} must hold exactly one 0x-prefixed 32-byte hex key (and an optional final newline)`);
  return key as `0x${string}`;
}

export const judgeCommand: Command = {
  name: 'judge',
  summary: 'Run a judge service that signs its own verdicts (OpenAI-compatible, wrapping a model endpoint or the local rules model), or create its key (keygen).',
  help: `Usage: tally judge serve --key <file> [--port <n>] [--host <addr>] [--upstream <url>] [--format verdict|matrix] [--json]
       tally judge keygen --key <file> [--json]

keygen creates the key file (owner-only: directory 0700, file 0600) when it
does not exist — an existing one is never replaced — and prints the judge's
signer address (lowercase 0x…), the address a mandate's judges or panel names.
With --json: {"ok", "created", "path", "address"}.

serve:

Serves POST /v1/chat/completions. Each Tally judge request is answered by the
model — the OpenAI-compatible endpoint at --upstream (its bearer key from
$TALLY_JUDGE_UPSTREAM_KEY), or without --upstream the deterministic local rules
model — and the response carries the header
  x-verdict-signature: EIP-191 signature over <model>:<sha256(request)>:<sha256(response)>
made with the service's own key (PROTOCOL.md §10). Name the key's address in a
mandate's judges or panel; point the referee at it with
createOpenAiJudge({ baseUrl, model, signature: { header: 'x-verdict-signature' } }).

Prints "tally judge: listening on http://<host>:<port> signer 0x…" when ready.
SIGTERM or SIGINT stops it (exit 0).

Options:
  --key <file>       the service's secp256k1 key: 0x + 64 hex (else $TALLY_JUDGE_KEY_FILE)
  --port <n>         port (default 8090; 0 picks a free one)
  --host <addr>      address (default 127.0.0.1)
  --upstream <url>   base URL of the model endpoint, e.g. http://127.0.0.1:8080/v1
  --format <f>       the local model's answer: verdict (default) or matrix
  --json             print {"ok", "listening", "signer"} when ready (errors as
                     {"ok":false, "code", "message", "exit"})
${timeoutHelp(16)}

A body over 256 KiB is answered 413; a body that is not the canonical bytes of
a Tally judge request (a BOM, a duplicate member, a lone surrogate, 1e999999,
a "__proto__" member…) is answered 400 with {"error":{"code":…}} and not signed.`,
  options: {
    key: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    upstream: { type: 'string' },
    format: { type: 'string' },
    ...TIMEOUT_OPTIONS,
  },
  async run({ values, positionals }, io) {
    if (positionals.length === 1 && positionals[0] === 'keygen') return keygen(values, io);
    if (positionals.length !== 1 || positionals[0] !== 'serve') throw new CliError("usage: tally judge serve|keygen --key <file> (run 'tally judge --help')");
    const port = str(values, 'port') ?? '8090';
    if (!/^[0-9]{1,5}$/.test(port) || Number(port) > 65535) throw new CliError('--port must be an integer from 0 to 65535');
    const host = str(values, 'host') ?? '127.0.0.1';
    const format = str(values, 'format') ?? 'verdict';
    if (format !== 'verdict' && format !== 'matrix') throw new CliError('--format must be verdict or matrix');
    const upstream = str(values, 'upstream');
    if (upstream !== undefined && !/^https?:\/\/[\x21-\x7e]+$/.test(upstream)) throw new CliError('--upstream must be an http(s) URL');
    const timeouts = timeoutsFromOptions(values);
    const key = await readSecpKeyFile(keyPath(values, io, 'serve'), io);
    const { createJudgeService } = await import('../../referee/judge-service.js');
    const { privateKeyToAccount } = await import('viem/accounts');
    const apiKey = io.env['TALLY_JUDGE_UPSTREAM_KEY'];
    const server = createJudgeService({
      key,
      timeouts,
      model: upstream === undefined ? { kind: 'local', format } : { kind: 'upstream', baseUrl: upstream, ...(apiKey === undefined ? {} : { apiKey }) },
    });
    const signer = privateKeyToAccount(key).address.toLowerCase();
    await serveUntilSignal(server, Number(port), host, (url) => println(io.stdout, jsonMode(values) ? JSON.stringify({ ok: true, listening: url, signer }) : `tally judge: listening on ${url} signer ${signer}`), { cut: true });
    return EXIT.ok;
  },
};
