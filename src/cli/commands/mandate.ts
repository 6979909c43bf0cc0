/**
 * `tally mandate sign|verify|typed-data`: what a principal needs to put a
 * mandate in force (docs/PROTOCOL.md §10, "The principal's signature"). The
 * input is always the whole session spec, because that is what is signed.
 */
import { readFileSync } from 'node:fs';
import { CliError, EXIT, println, str, type Command } from '../command.js';
import { jsonArgument } from './session-io.js';
import { writeTextFile } from './checkpoint.js';
import { TEST_KEYS, signingKey } from './intent.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export const mandateCommand: Command = {
  name: 'mandate',
  summary: "Sign a session spec's mandate as its principal (EIP-712 or EIP-191), verify it, or print its typed data for a wallet.",
  help: `Usage: tally mandate sign <spec.json|@file|json|-> --key <file|test:name> [--scheme eip712|eip191] [--out <file>]
       tally mandate verify <spec.json|@file|json|-> [--json]
       tally mandate typed-data <spec.json|@file|json|->

A mandate (spec.mandate) exists only signed by its principal: the engine
refuses to open a session whose mandate is unsigned or signed by another key.
What is signed is the whole spec with mandate.signature removed (so the
agents and the day are signed with the mandate).

sign        checks the spec as the engine will, signs it with the principal's
            key and prints the spec with mandate.signature set (an older
            signature is replaced; a mandate without "version" gets version 2).
            The key's address must be mandate.principal.
verify      checks the spec (mandate, agents, signature) exactly as 'tally open'
            will; prints the signer and scheme
typed-data  prints the EIP-712 typed data (eth_signTypedData_v4) a wallet
            signs; put the wallet's signature into mandate.signature as
            {"scheme":"eip712","value":"0x…"}

Options:
  --key <file|test:name>  a file holding the principal's 0x-prefixed secp256k1
                          private key, or a PUBLIC test key: ${TEST_KEYS.map((k) => `test:${k}`).join(', ')}
  --scheme <s>            eip712 (default: typed data a wallet can show) or
                          eip191 (personal_sign, where a wallet cannot)
  --out <file>            write the signed spec to <file> instead of stdout
  --json                  print the result as JSON

Exit codes: 0 signed / valid, 1 invalid spec or signature, 2 usage error,
3 I/O error.`,
  options: { key: { type: 'string' }, scheme: { type: 'string' }, out: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }, io) {
    const [verb, input, ...extra] = positionals;
    if (verb === undefined || !['sign', 'verify', 'typed-data'].includes(verb)) throw new CliError("give a verb: tally mandate sign|verify|typed-data <spec>. Run 'tally mandate --help'.");
    if (input === undefined || extra.length > 0) throw new CliError(`tally mandate ${verb} takes exactly one session spec (a file, @file, inline JSON, or - for stdin)`);
    const text = input === '-' ? readFileSync(0, 'utf8') : undefined;
    const doc = text !== undefined ? jsonArgument(text, io, 'the spec') : jsonArgument(input, io, 'the spec', true);
    if (!isObject(doc) || !isObject(doc['mandate'])) throw new CliError('the spec must be a JSON object with a "mandate" object');
    const referee = await import('../../referee/index.js');
    const json = values['json'] === true;
    const invalid = (problem: string) => {
      if (json) println(io.stdout, JSON.stringify({ ok: false, problem }));
      println(io.stderr, `invalid: ${problem}`);
      return EXIT.invalid;
    };
    if (verb === 'typed-data') {
      let typed;
      try {
        typed = referee.mandateTypedData(doc);
        referee.mandateDigest(doc, 'eip712');
      } catch (e) {
        return invalid(`the mandate cannot be signed as typed data: ${(e as Error).message.split('\n')[0]}`);
      }
      const { domain, types, primaryType, message } = typed;
      const full = { types: { EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'version', type: 'string' }], ...types }, primaryType, domain, message };
      println(io.stdout, JSON.stringify(full));
      return EXIT.ok;
    }
    if (verb === 'sign') {
      const scheme = str(values, 'scheme') ?? 'eip712';
      if (scheme !== 'eip712' && scheme !== 'eip191') throw new CliError('--scheme must be eip712 or eip191');
      const key = await signingKey(values, io);
      const m = doc['mandate'] as Record<string, unknown>;
      const { signature: _old, ...rest } = m;
      const spec = { ...doc, mandate: { ...rest, version: m['version'] ?? referee.MANDATE_VERSION } };
      const { privateKeyToAccount } = await import('viem/accounts');
      const address = privateKeyToAccount(key).address.toLowerCase();
      if (typeof m['principal'] !== 'string' || m['principal'].toLowerCase() !== address) {
        return invalid(`the key's address ${address} is not the mandate's principal ${String(m['principal'])}`);
      }
      let signed: Record<string, unknown>;
      try {
        signed = await referee.signMandate(spec, key, scheme);
      } catch (e) {
        return invalid(`the mandate cannot be signed: ${(e as Error).message.split('\n')[0]}`);
      }
      const problem = referee.checkRefereeSpec(signed as Parameters<typeof referee.checkRefereeSpec>[0]);
      if (problem !== undefined) return invalid(problem);
      const out = str(values, 'out');
      const textOut = JSON.stringify(signed) + '\n';
      if (out === undefined) io.stdout.write(textOut);
      else println(io.stdout, `signed spec (principal ${address}, ${scheme}) written to ${writeTextFile(out, textOut, io, 'the signed spec')}`);
      return EXIT.ok;
    }
    const problem = referee.checkRefereeSpec(doc as Parameters<typeof referee.checkRefereeSpec>[0]);
    if (problem !== undefined) return invalid(problem);
    const sig = referee.checkMandateSignature(doc);
    if (!sig.ok) return invalid(sig.problem);
    if (json) println(io.stdout, JSON.stringify({ ok: true, scheme: sig.scheme, signer: sig.signer, principal: String((doc['mandate'] as Record<string, unknown>)['principal']).toLowerCase() }));
    else println(io.stdout, `valid: the mandate is signed by its principal ${sig.signer} (${sig.scheme})`);
    return EXIT.ok;
  },
};
