/**
 * The grader's engine-log options, shared by `verify`, `verify-proof`,
 * `replay` and `grade verify`: `--log-key <vkey>` REQUIRES the day's log
 * binding (docs/PROTOCOL.md §15.5) — a tlog-proof that the session
 * checkpoint the day was accepted against is a leaf of the engine log,
 * signed by that key — and `--log-proof <file>` names it (default:
 * `log-proof.tlog-proof` beside `--checkpoint`, as `tally export` writes).
 * With `--log-key`, a witness policy applies to the log checkpoint: what
 * witnesses cosign is the engine log. `--log-identity <file>` (repeatable: a
 * pinned identity, then its successors) takes the place of `--log-key` and
 * the witness policy: the identity (§15.8) names each shard's key and
 * policy, and requires the binding under it (§15.9).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { IdentityShard } from '../../identity/document.js';
import type { BoundCheckpoint, VerifyLogBindingResult } from '../../log/binding.js';
import type { WitnessPolicy } from '../../witness/index.js';
import { CliError, EXIT, println, str, type CommandIO } from '../command.js';
import { readTextFile, verifierKeysFor } from './checkpoint.js';
import { printWitnessFailure } from './witness-policy.js';

type Values = Record<string, unknown>;

/** The file name `tally export` writes the log binding under. */
export const LOG_PROOF_FILE = 'log-proof.tlog-proof';
/** The file name `tally export` writes the log's verifier key under. */
export const LOG_VKEY_FILE = 'log.vkey';

/** parseArgs options of the log binding. */
export const LOG_BINDING_OPTIONS = {
  'log-key': { type: 'string' },
  'log-identity': { type: 'string', multiple: true },
  'log-proof': { type: 'string' },
} as const;

/** Help lines of the log binding options. */
export const LOG_BINDING_HELP = `  --log-key <vkey>  the engine log's verifier key (or a file of keys; named as
                    the log's origin): REQUIRE the day's log binding, a tlog-proof
                    that its checkpoint is a leaf of the engine log signed by this
                    key (missing or not matching: invalid, TALLY_LOG_* codes); a
                    witness policy then applies to the log's checkpoint
  --log-proof <f>   the log binding (default: ${LOG_PROOF_FILE} beside --checkpoint)
  --log-identity <f>  instead of --log-key and a witness policy: the log's signed
                    identity (tally log identity); repeat it to follow a rotation
                    (the pinned one first, then each successor). REQUIRES the log
                    binding under it (TALLY_LOG_IDENTITY_* codes)`;

/** A binding that verified. */
export type LogBound = Extract<VerifyLogBindingResult, { ok: true }> & { readonly file: string; readonly cosignedBy?: readonly string[]; readonly shard?: IdentityShard };

/** The `--log-identity` files, in order (empty when not given). */
function identityFiles(values: Values): readonly string[] {
  const raw = values['log-identity'];
  return Array.isArray(raw) ? raw.filter((x): x is string => typeof x === 'string') : typeof raw === 'string' ? [raw] : [];
}

/** Whether `--log-key` or `--log-identity` asks for the binding (usage errors: `--log-proof` without either, both, or an identity beside a witness policy). */
export function wantsLogBinding(values: Values): boolean {
  const identity = identityFiles(values).length > 0;
  if (identity && str(values, 'log-key') !== undefined) throw new CliError('give either --log-identity or --log-key, not both: the identity names the log key');
  if (identity && (values['witness'] !== undefined || values['policy'] !== undefined || values['quorum'] !== undefined)) throw new CliError('--log-identity states the witness policy: drop --witness/--quorum/--policy');
  const asked = identity || str(values, 'log-key') !== undefined;
  if (!asked && str(values, 'log-proof') !== undefined) throw new CliError("--log-proof needs --log-key <vkey> or --log-identity <file>: a log binding is only as good as the log key that signed it");
  return asked;
}

/**
 * Checks the log binding of `checkpoint` as the options ask (see the module
 * comment). Prints a refusal (`invalid: log binding <file>: <code>: …`) and
 * returns its exit code; resolves the verified binding otherwise.
 */
export async function checkLogBinding(
  values: Values,
  io: CommandIO,
  checkpoint: BoundCheckpoint,
  options: { readonly seal?: boolean; readonly policy?: WitnessPolicy | undefined; readonly beside?: string | undefined },
): Promise<number | LogBound> {
  const json = values['json'] === true;
  const identities = identityFiles(values);
  const given = str(values, 'log-proof');
  const file = given ?? (options.beside === undefined ? undefined : join(dirname(resolve(io.cwd, options.beside)), LOG_PROOF_FILE));
  const fail = (r: { readonly code: string; readonly message: string; readonly stage: string }, where: string): number => {
    if (json) println(io.stdout, JSON.stringify({ ok: false, stage: r.stage, code: r.code, message: r.message }));
    println(io.stderr, `invalid: log binding ${where}: ${r.code}: ${r.message}`);
    return EXIT.invalid;
  };
  if (file === undefined || (given === undefined && !existsSync(file))) {
    return fail({ stage: 'log', code: 'TALLY_LOG_BINDING_MISSING', message: file === undefined ? '--log-key requires the log binding: pass --log-proof <file> (tally export writes log-proof.tlog-proof)' : `--log-key requires the log binding and there is none at ${file} (pass --log-proof <file>)` }, file ?? '(none)');
  }
  const text = readTextFile(file, io, 'the log binding');
  if (identities.length > 0) return checkUnderIdentity(identities, text, file, io, checkpoint, options.seal, fail, json);
  const logVerifiers = await verifierKeysFor(values, io, 'log-key');
  const opts = { logVerifiers, checkpoint, ...(options.seal === undefined ? {} : { seal: options.seal }) };
  const { verifyLogBinding } = await import('../../log/binding.js');
  if (options.policy === undefined) {
    const r = verifyLogBinding(text, opts);
    return r.ok ? { ...r, file } : fail(r, file);
  }
  const { verifyWitnessedLogBinding } = await import('../../witness/index.js');
  const r = verifyWitnessedLogBinding(text, { ...opts, policy: options.policy });
  return answered(r, file, io, json, fail);
}

type Fail = (r: { readonly code: string; readonly message: string; readonly stage: string }, where: string) => number;

/** A binding's verdict as the command answers it: bound, refused by the witness policy on the log checkpoint, or refused. */
function answered<R extends { readonly ok: true } | { readonly ok: false; readonly code: string; readonly message: string; readonly stage: string }>(r: R, file: string, io: CommandIO, json: boolean, fail: Fail): number | (Extract<R, { ok: true }> & { readonly file: string }) {
  if (r.ok) return { ...(r as Extract<R, { ok: true }>), file };
  const f = r as Extract<R, { ok: false }>;
  if (f.stage === 'witnesses') {
    if (json) println(io.stdout, JSON.stringify({ ...f, stage: 'log-witnesses' }));
    printWitnessFailure(io, `the log checkpoint in ${file}`, f);
    return EXIT.invalid;
  }
  return fail(f, file);
}

async function checkUnderIdentity(
  files: readonly string[],
  text: string,
  file: string,
  io: CommandIO,
  checkpoint: BoundCheckpoint,
  seal: boolean | undefined,
  fail: (r: { readonly code: string; readonly message: string; readonly stage: string }, where: string) => number,
  json: boolean,
): Promise<number | LogBound> {
  const { openLogIdentityChain, verifyLogBindingUnderIdentity } = await import('../../identity/index.js');
  const id = openLogIdentityChain(files.map((f) => readTextFile(f, io, 'the log identity')));
  if (!id.ok) return fail({ ...id, stage: 'identity' }, `(identity ${files.join(', ')})`);
  const r = verifyLogBindingUnderIdentity(text, { identity: id, checkpoint, ...(seal === undefined ? {} : { seal }) });
  return answered(r, file, io, json, fail);
}

/** Help lines of `tally verify --log`. */
export const LOG_READ_HELP = `  --log <url|dir>   with --log-key or --log-identity: also read the engine log
                    itself (a tally serve tiles prefix, or a tally tiles export
                    directory), its checkpoint signed by the log key (under an
                    identity: the key of the shard the binding is in): it must
                    extend the binding's, and no other checkpoint leaf of the
                    day's origin may give the day's size another root
                    (TALLY_LOG_EQUIVOCATION), follow its seal (TALLY_LOG_INCONSISTENT)
                    or differ from the day's tree (TALLY_LOG_SESSION_MISMATCH); the
                    refusal names both leaves and both roots. Never implied: verify
                    reads no log unless --log names where`;

/**
 * `--log <url|dir>`: the day checked against the log read (§15.10), its tree
 * read again from the bundle at the sizes the log's other leaves of its
 * origin name. Prints a refusal and returns its exit code (3 when the log
 * cannot be read); the number of leaves read otherwise.
 */
export async function checkLogRead(values: Values, io: CommandIO, bound: LogBound, bundle: string): Promise<number | { readonly leaves: number; readonly sameOrigin: readonly number[] }> {
  const where = str(values, 'log')!;
  const [{ checkDayInLog }, { logSource }, { bundleFileChunks, indexBundle }] = await Promise.all([import('../../log/day-in-log.js'), import('../../log/source.js'), import('../../receipt/index.js')]);
  let roots: ((n: number) => string | undefined) | undefined;
  const r = await checkDayInLog({
    source: logSource(where, io.cwd),
    // Under an identity, the log is read with the key of the shard the binding verified under (§15.9): one key, pinned by the identity.
    logVerifiers: bound.shard === undefined ? await verifierKeysFor(values, io, 'log-key') : [bound.shard.logKey],
    binding: bound,
    rootAt: (n) => roots?.(n),
    prepare: async (sizes) => {
      const ix = await indexBundle(bundleFileChunks(resolve(io.cwd, bundle)), { sizes, floor: 8 });
      if (!ix.ok) throw new CliError(`the bundle ${bundle} changed while it was verified`, EXIT.io, 'TALLY_CLI_IO');
      const { toHex } = await import('../../protocol/index.js');
      roots = (n) => (n <= ix.summary.size ? toHex(ix.tree.root(n)) : undefined);
    },
  });
  if (r.ok) return { leaves: r.leaves, sameOrigin: r.sameOrigin };
  if (values['json'] === true) println(io.stdout, JSON.stringify(r));
  println(io.stderr, `invalid: the engine log ${where}: ${r.code}: ${r.message}`);
  return r.code === 'TALLY_LOG_UNAVAILABLE' ? EXIT.io : EXIT.invalid;
}

/** The report line of a verified binding. */
export function logBoundLine(b: LogBound): string {
  return `engine log   leaf ${b.index} of ${b.log.origin} (size ${b.log.size})${b.leaf.seal ? ', the seal' : ''}, signed by the log key${b.cosignedBy === undefined ? '' : `; cosigned by ${b.cosignedBy.length === 0 ? '(none required)' : b.cosignedBy.join(', ')} (witness quorum met)`}`;
}

/** The JSON member of a verified binding. */
export function logBoundJson(b: LogBound): Record<string, unknown> {
  return { index: b.index, seal: b.leaf.seal, log: b.log, file: b.file, ...(b.cosignedBy === undefined ? {} : { cosignedBy: b.cosignedBy }) };
}
