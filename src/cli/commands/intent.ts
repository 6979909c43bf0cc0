import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { TallyError } from '../../protocol/index.js';
import { CliError, EXIT, ioProblem, println, str, type Command, type CommandIO } from '../command.js';
import { jsonArgument } from './session-io.js';
import { writeTextFile } from './checkpoint.js';

/** The demo's PUBLIC test keys (Anvil accounts 0–3), by name, for trying things: never for real money. */
export const TEST_KEYS = ['alpha', 'beta', 'mallory', 'principal'] as const;

async function testKey(name: string): Promise<`0x${string}`> {
  const { ANVIL_KEY_3, DEMO_AGENTS, INTRUDER } = await import('../../demo/keys.js');
  if (name === 'principal') return ANVIL_KEY_3;
  const agent = [...DEMO_AGENTS, INTRUDER].find((a) => a.id === name);
  if (agent === undefined) throw new CliError(`--key test:${name}: no such test key (test keys: ${TEST_KEYS.map((k) => `test:${k}`).join(', ')})`);
  return agent.key;
}

/** `--key`: a file holding a 0x-prefixed secp256k1 private key (64 hex), or `test:<name>`. */
export async function signingKey(values: Record<string, unknown>, io: CommandIO): Promise<`0x${string}`> {
  const arg = str(values, 'key');
  if (arg === undefined) throw new CliError(`--key <file|test:name> is required (a file holding a 0x… private key; test keys: ${TEST_KEYS.map((k) => `test:${k}`).join(', ')})`);
  if (arg.startsWith('test:')) return testKey(arg.slice(5));
  if (/^(0x)?[0-9a-fA-F]{64}$/.test(arg)) throw new CliError('--key takes a key FILE, not the key itself (keys on the command line end up in shell history)');
  let text: string;
  try {
    text = readFileSync(resolve(io.cwd, arg), 'utf8');
  } catch (e) {
    throw new CliError(`cannot read the key file ${resolve(io.cwd, arg)}: ${ioProblem(e as NodeJS.ErrnoException)}`, EXIT.io, 'TALLY_CLI_IO');
  }
  const key = text.trim();
  if (!/^0x[0-9a-f]{64}$/i.test(key)) throw new CliError(`the key file ${arg} must hold one 0x-prefixed 64-hex secp256k1 private key`);
  return key.toLowerCase() as `0x${string}`;
}

export const intentCommand: Command = {
  name: 'intent',
  summary: "Sign an Intent with a key file (or a public test key), print its canonical payload and hash, verify its signature, or print a key's address.",
  help: `Usage: tally intent sign <intent.json|@file|json|-> --key <file|test:name> [--out <file>]
       tally intent hash <intent.json|@file|json|->
       tally intent verify <intent.json|@file|json|-> [--signer <0x address>] [--json]
       tally intent address --key <file|test:name> [--json]

sign     validates the unsigned Intent (docs/PROTOCOL.md: the signed-Intent
         contract), signs its canonical payload (EIP-191 personal_sign) and
         prints the signed Intent as JSON (a signature on the input is replaced)
hash     prints the canonical payload (the exact signed text) and the intent
         hash, keccak256 of it (the same signed or unsigned)
verify   recovers the signer of a signed Intent; with --signer, it must be that
         address
address  prints the EIP-55 address of the key: what spec.agents maps an agent_id
         to (and spec.mandate's principal, operator, executor)

Options:
  --key <file|test:name>  a file holding a 0x-prefixed secp256k1 private key, or
                          one of the demo's PUBLIC test keys: ${TEST_KEYS.map((k) => `test:${k}`).join(', ')}
                          (Anvil accounts 0–3: for trying things, never for real value)
  --out <file>            write the signed Intent to <file> instead of stdout
  --signer <address>      the address the signature must recover to
  --json                  print the result as JSON

Exit codes: 0 signed / hashed / valid / printed, 1 invalid Intent or signature, 2 usage
error, 3 I/O error.`,
  options: { key: { type: 'string' }, out: { type: 'string' }, signer: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }, io) {
    const [verb, input, ...extra] = positionals;
    if (verb === 'address') {
      if (input !== undefined) throw new CliError('tally intent address takes no argument: the key comes from --key <file|test:name>');
      const key = await signingKey(values, io);
      const { privateKeyToAccount } = await import('viem/accounts');
      let address: string;
      try {
        address = privateKeyToAccount(key).address;
      } catch {
        println(io.stderr, 'invalid: the key is not a secp256k1 private key (0 < key < n)');
        return EXIT.invalid;
      }
      println(io.stdout, values['json'] === true ? JSON.stringify({ ok: true, address }) : address);
      return EXIT.ok;
    }
    if (verb === undefined || !['sign', 'hash', 'verify'].includes(verb)) throw new CliError("give a verb: tally intent sign|hash|verify <intent>, or tally intent address --key <file>. Run 'tally intent --help'.");
    if (input === undefined || extra.length > 0) throw new CliError(`tally intent ${verb} takes exactly one Intent (a file, @file, inline JSON, or - for stdin)`);
    const text = input === '-' ? readFileSync(0, 'utf8') : undefined;
    const doc = text !== undefined ? jsonArgument(text, io, 'the Intent') : jsonArgument(input, io, 'the Intent', true);
    const intent = await import('../../intent/index.js');
    const json = values['json'] === true;
    if (verb === 'hash') {
      let payload: string;
      try {
        payload = intent.canonicalPayload(doc as Parameters<typeof intent.canonicalPayload>[0]);
      } catch (e) {
        if (!(e instanceof TallyError)) throw e;
        println(io.stderr, `invalid: ${e.shortMessage}${e.details ? ` (${e.details})` : ''}`);
        return EXIT.invalid;
      }
      const hash = intent.hashCanonicalPayload(payload);
      println(io.stdout, json ? JSON.stringify({ ok: true, payload, intentHash: hash }) : `payload      ${payload}\nintent hash  ${hash}`);
      return EXIT.ok;
    }
    if (verb === 'sign') {
      const key = await signingKey(values, io);
      const unsigned = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? Object.fromEntries(Object.entries(doc).filter(([k]) => k !== 'signature')) : doc;
      let signed;
      try {
        signed = await intent.signIntent(unsigned as Parameters<typeof intent.signIntent>[0], key);
      } catch (e) {
        if (!(e instanceof TallyError)) throw e;
        println(io.stderr, `invalid: ${e.shortMessage}${e.details ? ` (${e.details})` : ''}`);
        return EXIT.invalid;
      }
      const out = str(values, 'out');
      const textOut = JSON.stringify(signed) + '\n';
      if (out === undefined) io.stdout.write(textOut);
      else println(io.stdout, `signed Intent (intent hash ${intent.intentHash(signed)}) written to ${writeTextFile(out, textOut, io, 'the signed Intent')}`);
      return EXIT.ok;
    }
    const expected = str(values, 'signer');
    if (expected !== undefined && !/^0x[0-9a-fA-F]{40}$/.test(expected)) throw new CliError('--signer must be a 0x-prefixed 40-hex address');
    const signer = await intent.recoverIntentSigner(doc);
    const ok = signer !== null && (expected === undefined || signer.toLowerCase() === expected.toLowerCase());
    if (json) println(io.stdout, JSON.stringify({ ok, signer, ...(expected === undefined ? {} : { expected }) }));
    if (!ok) {
      println(io.stderr, signer === null ? 'invalid: not a signed Intent, or its signature does not recover a signer' : `invalid: signed by ${signer}, not ${expected}`);
      return EXIT.invalid;
    }
    if (!json) println(io.stdout, `valid: signed by ${signer}${expected === undefined ? ' (unpinned: pass --signer <address> to require a signer)' : ''}\nintent hash  ${intent.intentHash(doc as Parameters<typeof intent.intentHash>[0])}`);
    return EXIT.ok;
  },
};
