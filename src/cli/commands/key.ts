/**
 * `tally key new`: creating the engine key is an explicit act. Every other
 * command that needs the engine key (checkpoint, export, serve --key, mcp
 * --key, consistency prove) reads an existing one and refuses a missing file
 * with exit 3, so a typo in $TALLY_KEY can never give a day a second engine
 * identity.
 */
import { resolve } from 'node:path';
import { TallyError } from '../../protocol/index.js';
import { DEFAULT_ENGINE_NAME, configuredEngineName, engineKeyPath, formatKeyId, loadEngineKeyFile, loadOrCreateEngineKey } from '../../receipt/index.js';
import { CliError, EXIT, println, str, type Command } from '../command.js';
import { KEY_HELP } from './checkpoint.js';

export const keyCommand: Command = {
  name: 'key',
  summary: 'Create the engine signing key (tally key new): the one explicit act that makes an engine identity.',
  help: `Usage: tally key new [--key <path>] [--name <name>] [--json]

Creates the engine's Ed25519 signing key at --key (default: $TALLY_KEY, else
.tally/engine.key) with owner-only permissions (directory 0700, file 0600) and
prints its verifier key (name+keyid+base64), the key graders pin. stderr names
the file and the key id. An existing key file is never replaced: that is
refused (exit 1) with the verifier key of the key already there.

Every other command that signs reads this key and refuses a missing one
(exit 3): checkpoint, checkpoint --print-key, export, consistency prove,
serve --key and mcp --key.

Options:
${KEY_HELP}
  --json            print {"ok", "created", "path", "name", "keyId", "verifierKey"}

Exit codes: 0 created, 1 a key file already exists (not replaced), 2 usage
error, 3 I/O error (the key or its directory cannot be written or read).`,
  options: { key: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }, io) {
    if (positionals.length !== 1 || positionals[0] !== 'new') throw new CliError("usage: tally key new [--key <path>] [--name <name>] (run 'tally key --help')");
    const json = values['json'] === true;
    const path = resolve(io.cwd, str(values, 'key') ?? engineKeyPath(io.env));
    const name = str(values, 'name') ?? configuredEngineName(io.env);
    try {
      const existing = await loadEngineKeyFile(path, name).catch((e: unknown) => {
        if (e instanceof TallyError && e.code === 'TALLY_KEY_FILE_NOT_FOUND') return undefined;
        throw e;
      });
      if (existing !== undefined) {
        const msg = `an engine key already exists at ${path} (key id ${formatKeyId(existing.keyId)}); it is not replaced. Its verifier key: ${existing.verifierKey}`;
        if (json) println(io.stdout, JSON.stringify({ ok: false, created: false, code: 'TALLY_KEY_EXISTS', message: msg, path, name: existing.name, keyId: formatKeyId(existing.keyId), verifierKey: existing.verifierKey }));
        println(io.stderr, `tally key: ${msg}`);
        return EXIT.invalid;
      }
      const key = await loadOrCreateEngineKey(path, name ?? DEFAULT_ENGINE_NAME);
      const keyId = formatKeyId(key.keyId);
      println(io.stderr, `tally key: created engine key ${path} (name ${key.name}, key id ${keyId}); keep it secret, give graders the verifier key below`);
      println(io.stdout, json ? JSON.stringify({ ok: true, created: true, path, name: key.name, keyId, verifierKey: key.verifierKey }) : key.verifierKey);
      return EXIT.ok;
    } catch (e) {
      if (!(e instanceof TallyError) || e instanceof CliError) throw e;
      throw new CliError(`engine key: ${e.shortMessage}${e.details ? ` (${e.details})` : ''}`, e.code === 'TALLY_NOTE_KEY_NAME_INVALID' ? EXIT.usage : EXIT.io, e.code);
    }
  },
};
