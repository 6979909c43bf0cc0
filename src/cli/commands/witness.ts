import { isAbsolute, resolve } from 'node:path';
import { TallyError } from '../../protocol/index.js';
import { CliError, EXIT, emit, jsonMode, println, str, type Command, type CommandIO } from '../command.js';
import { countOption } from './checkpoint.js';
import { TIMEOUT_OPTIONS, timeoutHelp, timeoutsFromOptions } from '../http-options.js';
import { serveUntilSignal } from '../listen.js';

type Values = Record<string, unknown>;

/** Default witness key file and database, relative to the working directory. */
const DEFAULT_WITNESS_KEY = '.tally/witness.key';
const DEFAULT_WITNESS_DB = '.tally/witness.db';

function pathOf(values: Values, key: string, fallback: string, io: CommandIO): string {
  const p = str(values, key) ?? fallback;
  if (p === '') throw new CliError(`--${key} must not be empty`);
  if (key === 'db' && (p === 'memory:' || /^postgres(ql)?:\/\//i.test(p))) return p;
  return isAbsolute(p) ? p : resolve(io.cwd, p);
}

async function witnessKey(values: Values, io: CommandIO, create: boolean) {
  const { loadEngineKeyFile, loadOrCreateEngineKey } = await import('../../receipt/index.js');
  const { cosignerKeyFrom } = await import('../../witness/index.js');
  const path = pathOf(values, 'key', DEFAULT_WITNESS_KEY, io);
  const name = str(values, 'name');
  try {
    if (create) {
      if (name === undefined) throw new CliError('witness keygen needs --name <witness name> (e.g. witness.example/w1)');
      return cosignerKeyFrom(await loadOrCreateEngineKey(path, name));
    }
    return cosignerKeyFrom(await loadEngineKeyFile(path, name));
  } catch (e) {
    if (!(e instanceof TallyError) || e instanceof CliError) throw e;
    const hint = e.code === 'TALLY_KEY_FILE_NOT_FOUND' ? ' (create it with: tally witness keygen --name <name>)' : '';
    throw new CliError(`witness key: ${e.shortMessage}${e.details ? ` (${e.details})` : ''}${hint}`, EXIT.io, e.code);
  }
}

async function openState(values: Values, io: CommandIO) {
  const { openWitnessStore } = await import('../../witness/index.js');
  const loc = pathOf(values, 'db', DEFAULT_WITNESS_DB, io);
  try {
    if (loc !== 'memory:' && !/^postgres/i.test(loc)) {
      const { mkdirSync } = await import('node:fs');
      const { dirname } = await import('node:path');
      mkdirSync(dirname(loc), { recursive: true, mode: 0o700 });
    }
    return await openWitnessStore(loc);
  } catch (e) {
    throw new CliError(`witness database: ${e instanceof TallyError ? `${e.shortMessage}${e.details ? ` (${e.details})` : ''}` : String(e)}`, EXIT.io, 'TALLY_CLI_IO');
  }
}

function logKeys(values: Values): string[] {
  const v = values['log-key'];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : [];
}

export const witnessCommand: Command = {
  name: 'witness',
  summary: 'Run a C2SP witness: cosign checkpoints only when consistent with what it cosigned before (keygen, trust, serve).',
  help: `Usage: tally witness keygen --name <name> [--key <file>] [--json]
       tally witness print-key [--key <file>] [--policy-line [--url <url>]] [--json]
       tally witness trust <log vkey> [--db <loc>]
       tally witness serve [--key <file>] [--db <loc>] [--log-key <vkey>]... [--origin-is-key-name] [--origin-rate <n>/<seconds>] [--host <h>] [--port <n>] [--prefix <p>]

A witness cosigns a log's checkpoints (C2SP tlog-cosignature/v1, Ed25519) only
after checking them against the latest checkpoint it cosigned for the same
origin, so a log cannot show two graders two histories both cosigned by it.

  keygen     create the witness key file (owner-only) if it does not exist and
             print the witness's verifier key (name+keyid+base64 of 0x04||key)
             — give this to graders (--witness) and to engines
  print-key  print the verifier key of an existing witness key file; with
             --policy-line, its line for a policy file instead:
             "witness <name> <hex key> [<url>]" (Sigsum policy format)
  trust      add a log (engine) verifier key the witness accepts checkpoints
             from; an engine key named N covers the origins N/<64 hex session>
  serve      serve POST <prefix>/add-checkpoint (C2SP tlog-witness); prints
             "tally witness: listening on http://<host>:<port>" when ready and
             one JSON line per request on stderr; GET <prefix>/healthz answers
             {"ok":true} (unlogged, for readiness probes); SIGTERM/SIGINT stop it

Options:
  --key <file>      witness key file (default ${DEFAULT_WITNESS_KEY}); the same
                    PRIVATE+KEY+… encoding as engine keys (the Ed25519 seed)
  --name <name>     witness name (keygen; checked against the file otherwise)
  --db <loc>        witness state: a SQLite file (default ${DEFAULT_WITNESS_DB}),
                    postgres://… or memory:
  --log-key <vkey>  (serve, repeatable) also trust this log key
  --origin-is-key-name
                    (serve) cosign only logs whose origin is the trusted key's
                    name, as litewitness does: an engine log key covers its
                    engine log, no per-session origin (404 unknown-origin)
  --origin-rate <n>/<s>
                    (serve) at most n cosignings per origin in any s seconds;
                    beyond it 429 rate-limited with Retry-After (default: none)
  --host <h>        listen address (default 127.0.0.1)
  --port <n>        listen port (default 0: any free port)
  --prefix <p>      submission prefix (default none)
  --json            keygen/print-key: {"ok", "name", "verifierKey", "policyLine"};
                    trust: {"ok", "trusted", "name", "db"}; serve: one line
                    {"ok", "listening", "verifierKey"} when ready; errors as
                    {"ok":false, "code", "message", "exit"}
${timeoutHelp(16)}

Exit codes: 0 ok, 2 usage error, 3 I/O error (key file, database, port).`,
  options: {
    key: { type: 'string' },
    name: { type: 'string' },
    db: { type: 'string' },
    'log-key': { type: 'string', multiple: true },
    'origin-is-key-name': { type: 'boolean' },
    'origin-rate': { type: 'string' },
    host: { type: 'string' },
    port: { type: 'string' },
    prefix: { type: 'string' },
    ...TIMEOUT_OPTIONS,
    'policy-line': { type: 'boolean' },
    url: { type: 'string' },
  },
  async run({ values, positionals }, io) {
    const [sub, ...rest] = positionals;
    if (sub === 'keygen' || sub === 'print-key') {
      if (rest.length > 0) throw new CliError(`witness ${sub} takes no arguments`);
      const key = await witnessKey(values, io, sub === 'keygen');
      const url = str(values, 'url');
      if (url !== undefined && !/^https?:\/\/\S+$/.test(url)) throw new CliError('--url must be an http(s) URL');
      if (url !== undefined && values['policy-line'] !== true) throw new CliError('--url goes with --policy-line');
      const policyLine = `witness ${key.name} ${Buffer.from(key.publicKey).toString('hex')}${url === undefined ? '' : ` ${url}`}`;
      return emit(io, values, { ok: true, name: key.name, verifierKey: key.verifierKey, policyLine }, () => [values['policy-line'] === true ? policyLine : key.verifierKey]);
    }
    if (sub === 'trust') {
      if (rest.length !== 1) throw new CliError("witness trust takes exactly one log verifier key. Run 'tally witness --help'.");
      const { parseVerifierKey } = await import('../../receipt/index.js');
      const p = parseVerifierKey(rest[0]!);
      if (!p.ok) throw new CliError(`not a log verifier key: ${p.message}`);
      const store = await openState(values, io);
      try {
        await store.addLogKey(p.verifier.verifierKey);
      } finally {
        await store.close();
      }
      return emit(io, values, { ok: true, trusted: p.verifier.verifierKey, name: p.verifier.name, db: store.name }, () => [`trusted ${p.verifier.name}+${p.verifier.verifierKey.split('+')[1]} in ${store.name}`]);
    }
    if (sub === 'serve') {
      if (rest.length > 0) throw new CliError('witness serve takes no arguments');
      const port = countOption(values, 'port', 0) ?? 0;
      if (port > 65535) throw new CliError('--port must be 0 to 65535');
      const host = str(values, 'host') ?? '127.0.0.1';
      const prefix = str(values, 'prefix') ?? '';
      const timeouts = timeoutsFromOptions(values);
      if (prefix !== '' && !/^\/[A-Za-z0-9._~\-/]*[^/]$/.test(prefix)) throw new CliError('--prefix must start with "/" and not end with "/"');
      const { parseVerifierKey } = await import('../../receipt/index.js');
      const extra = logKeys(values).map((k) => {
        const p = parseVerifierKey(k);
        if (!p.ok) throw new CliError(`--log-key: ${p.message}`);
        return p.verifier.verifierKey;
      });
      const rateArg = str(values, 'origin-rate');
      const rm = rateArg === undefined ? undefined : /^([1-9][0-9]{0,8})\/([1-9][0-9]{0,8})$/.exec(rateArg);
      if (rm === null) throw new CliError('--origin-rate must be <checkpoints>/<seconds>, e.g. 12/60');
      const originRate = rm === undefined ? undefined : { checkpoints: Number(rm[1]), windowSeconds: Number(rm[2]) };
      const key = await witnessKey(values, io, false);
      const { createWitness, createWitnessHttpServer } = await import('../../witness/index.js');
      const store = await openState(values, io);
      try {
        const witness = createWitness({ key, store, ...(values['origin-is-key-name'] === true ? { originIsKeyName: true } : {}), ...(originRate === undefined ? {} : { originRate }) });
        for (const k of extra) await witness.trustLogKey(k);
        const server = createWitnessHttpServer(witness, { prefix, timeouts, onRequest: (e) => println(io.stderr, JSON.stringify({ time: new Date().toISOString(), ...e })) });
        await serveUntilSignal(server, port, host, (url) => {
          if (jsonMode(values)) return println(io.stdout, JSON.stringify({ ok: true, listening: `${url}${prefix}`, verifierKey: key.verifierKey }));
          println(io.stdout, `tally witness: listening on ${url}${prefix}`);
          println(io.stdout, `tally witness: verifier key ${key.verifierKey}`);
        });
      } finally {
        await store.close().catch(() => {});
      }
      return EXIT.ok;
    }
    throw new CliError(sub === undefined ? "witness needs a subcommand: keygen, print-key, trust or serve. Run 'tally witness --help'." : `unknown witness subcommand ${JSON.stringify(sub)}. Run 'tally witness --help'.`);
  },
};
