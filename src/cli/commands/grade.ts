import { resolve } from 'node:path';
import { TallyError, canonicalJson, parseStrictJson, tryCanonicalJson, type CanonicalObject } from '../../protocol/index.js';
import { bundleFileChunks, formatKeyId, gradeBundle, loadEngineKey, openSessionCheckpoint, verifyGradeForBundle, type EngineKey } from '../../receipt/index.js';
import { CliError, EXIT, inputFile, println, str, type Command, type CommandIO } from '../command.js';
import { readTextFile, verifierKeysFor, writeTextFile } from './checkpoint.js';
import { LOG_BINDING_HELP, LOG_BINDING_OPTIONS, checkLogBinding, logBoundJson, logBoundLine, wantsLogBinding, type LogBound } from './log-binding.js';
import { WITNESS_POLICY_HELP, WITNESS_POLICY_OPTIONS, printWitnessFailure, witnessPolicyFor } from './witness-policy.js';

type Values = Record<string, unknown>;

/** The grader's key: `--key <path>` (required), created on first use when `--name` is given. */
async function graderKey(values: Values, io: CommandIO): Promise<EngineKey> {
  const path = str(values, 'key');
  if (path === undefined) throw new CliError('--key <path> (the grader key file) is required');
  const name = str(values, 'name');
  try {
    return await loadEngineKey({ path, ...(name === undefined ? {} : { name }), create: name !== undefined, env: {}, cwd: io.cwd });
  } catch (e) {
    if (!(e instanceof TallyError)) throw e;
    const hint = e.code === 'TALLY_KEY_FILE_NOT_FOUND' ? ' (pass --name <grader name> to create one)' : '';
    throw new CliError(`grader key: ${e.shortMessage}${e.details ? ` (${e.details})` : ''}${hint}`, EXIT.io, e.code);
  }
}

function bundlePath(p: string | undefined, io: CommandIO): string {
  if (p === undefined) throw new CliError("a bundle path is required. Run 'tally grade --help'.");
  const file = resolve(io.cwd, p);
  inputFile(file, io, 'the bundle');
  return file;
}

export const gradeCommand: Command = {
  name: 'grade',
  summary: 'Sign or verify a certified grade: a grader signature pinning one exact sealed transcript.',
  help: `Usage: tally grade sign <bundle.jsonl> --grade <json|@file> --key <path> [--name <grader name>] [--out <file>] [--json]
       tally grade verify <grade-file> <bundle.jsonl> --vkey <grader vkey|file> [--checkpoint <file> --engine-key <vkey> (--witness <vkey>... [--quorum k] | --policy <file>) [--log-key <vkey> | --log-identity <file>... [--log-proof <file>]]] [--json]
       tally grade key --key <path> [--name <grader name>] [--json]

A certified grade is the grader's C2SP signed note over the text
  tally/v1/grade / session <id> / size <n> / root <receipt root> / grade <JSON>
(one line each; docs/PROTOCOL.md §11). It pins one exact sealed transcript:
verifying it against any other bundle — another day, one entry more or less,
one byte edited and re-sealed — fails.

  sign    verifies the bundle (sealed), then signs a grade of it with the
          grader key; the grade payload is a JSON object (score, rubric, notes)
  verify  checks the grade's signature against the pinned grader key, then
          verifies the bundle and compares session id, size and receipt root
  key     prints the grader's verifier key (give it to whoever checks grades)

Options:
  --grade <json>    the grade payload: a JSON object, inline or @file
  --key <path>      sign/key: the grader's key file (PRIVATE+KEY+… or PKCS#8
                    PEM, owner-only); created on first use when --name is given
  --vkey <vkey>     verify: the grader's verifier key, or a file of them (--key:
                    its old spelling for verify, accepted until the next release)
  --name <name>     the grader's key name (for a new key, or to require it)
  --out <file>      sign: write the signed grade to <file> instead of stdout
  --json            print the result as JSON
  --checkpoint <f>  verify: the sealed checkpoint of the graded transcript; with
                    a witness policy it is required, must open with
                    --engine-key, pin the same session, size and root as the
                    grade, and carry the witness quorum
  --engine-key <v>  verify: the engine's verifier key (or a file of keys)
${WITNESS_POLICY_HELP}
${LOG_BINDING_HELP}
                    (verify: needs --checkpoint and --engine-key; the
                    checkpoint's leaf must be the seal)

Exit codes: 0 signed / valid, 1 invalid (bad bundle, bad signature, another
transcript), 2 usage error, 3 I/O error.`,
  renamedOptions: (positionals) => (positionals[0] === 'verify' ? { key: 'vkey' } : {}),
  options: { vkey: { type: 'string' }, grade: { type: 'string' }, key: { type: 'string' }, name: { type: 'string' }, out: { type: 'string' }, json: { type: 'boolean' }, checkpoint: { type: 'string' }, 'engine-key': { type: 'string' }, ...WITNESS_POLICY_OPTIONS, ...LOG_BINDING_OPTIONS },
  async run({ values, positionals }, io) {
    const [sub, ...args] = positionals;
    const json = values['json'] === true;
    if (sub === 'key') {
      if (args.length > 0) throw new CliError('grade key takes no arguments');
      const key = await graderKey(values, io);
      println(io.stdout, json ? JSON.stringify({ ok: true, name: key.name, verifierKey: key.verifierKey }) : key.verifierKey);
      return EXIT.ok;
    }
    if (sub === 'sign') {
      if (args.length !== 1) throw new CliError('grade sign takes exactly one bundle path');
      const file = bundlePath(args[0], io);
      const g = str(values, 'grade');
      if (g === undefined) throw new CliError('--grade <json|@file> is required (a JSON object)');
      const source = g.trimStart().startsWith('@') ? readTextFile(g.trimStart().slice(1), io, 'the grade payload') : g;
      const strict = parseStrictJson(source);
      if (!strict.ok) throw new CliError(`--grade is not valid JSON (${strict.code}): ${strict.message}`);
      const payload = strict.value;
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw new CliError('--grade must be a JSON object');
      const c = tryCanonicalJson(payload);
      if (!c.ok) throw new CliError(`--grade is outside canonical JSON (${c.problem.code} at ${c.problem.path || '/'}): no null, no fractions, safe integers only`);
      const key = await graderKey(values, io);
      const r = await gradeBundle(bundleFileChunks(file), payload as CanonicalObject, [key]);
      if (!r.ok) {
        if (json) println(io.stdout, JSON.stringify(r));
        println(io.stderr, `invalid: entry ${r.index}: ${r.code}: ${r.message}`);
        return EXIT.invalid;
      }
      const out = str(values, 'out');
      const written = out === undefined ? undefined : writeTextFile(out, r.note, io, 'the grade');
      if (json) println(io.stdout, JSON.stringify({ ok: true, statement: r.statement, grade: r.note, verifierKey: key.verifierKey, ...(written === undefined ? {} : { out: written }) }));
      else if (written === undefined) io.stdout.write(r.note);
      else println(io.stdout, `grade of session ${r.statement.sessionId} (${r.statement.size} entries) signed by ${key.name} written to ${written}`);
      return EXIT.ok;
    }
    if (sub === 'verify') {
      if (args.length !== 2) throw new CliError('grade verify takes a grade file and a bundle path');
      const verifiers = await verifierKeysFor(values, io);
      const asked = await witnessPolicyFor(values, io);
      const cpPath = str(values, 'checkpoint');
      if (asked !== undefined && (cpPath === undefined || values['engine-key'] === undefined)) throw new CliError('a witness policy needs --checkpoint <sealed checkpoint> and --engine-key <vkey>: the witnesses cosign the checkpoint, not the grade');
      // With --log-key the witness policy is the log checkpoint's (what witnesses cosign is the engine log).
      const bound = wantsLogBinding(values);
      if (bound && (cpPath === undefined || values['engine-key'] === undefined)) throw new CliError('--log-key (or --log-identity) needs --checkpoint <sealed checkpoint> and --engine-key <vkey>: the log binds the checkpoint, not the grade');
      const policy = bound ? undefined : asked;
      const text = readTextFile(args[0]!, io, 'the grade');
      const file = bundlePath(args[1], io);
      const r = await verifyGradeForBundle(text, bundleFileChunks(file), { verifiers });
      if (!r.ok) {
        if (json) println(io.stdout, JSON.stringify(r));
        println(io.stderr, r.stage === 'chain' ? `invalid: bundle entry ${r.index}: ${r.code}: ${r.message}` : `invalid: ${r.stage}: ${r.code}: ${r.message}`);
        return EXIT.invalid;
      }
      let cosignedBy: readonly string[] | undefined;
      let log: LogBound | undefined;
      if (cpPath !== undefined) {
        const engine = await verifierKeysFor(values, io, 'engine-key');
        const signedCheckpoint = readTextFile(cpPath, io, 'the checkpoint');
        const cp = openSessionCheckpoint(signedCheckpoint, engine);
        const s = r.statement;
        const fail = (stage: string, code: string, message: string): number => {
          if (json) println(io.stdout, JSON.stringify({ ok: false, stage, code, message }));
          println(io.stderr, `invalid: checkpoint ${cpPath}: ${stage}: ${code}: ${message}`);
          return EXIT.invalid;
        };
        if (!cp.ok) return fail(cp.stage, cp.code, cp.message);
        if (cp.checkpoint.sessionId !== s.sessionId || cp.checkpoint.size !== s.size || cp.checkpoint.root !== s.receiptRoot) {
          return fail('transcript', 'other-transcript', `the checkpoint (session ${cp.checkpoint.sessionId}, ${cp.checkpoint.size} entries, root ${cp.checkpoint.root}) is not the graded transcript`);
        }
        if (policy !== undefined) {
          const { checkWitnessPolicy } = await import('../../witness/index.js');
          const w = checkWitnessPolicy(signedCheckpoint, engine, policy);
          if (!w.ok) {
            if (json) println(io.stdout, JSON.stringify({ ...w, stage: 'witnesses' }));
            printWitnessFailure(io, `checkpoint ${cpPath}`, w);
            return EXIT.invalid;
          }
          cosignedBy = w.signed;
        }
        if (bound) {
          const b = await checkLogBinding(values, io, { origin: cp.checkpoint.origin, size: cp.checkpoint.size, root: cp.checkpoint.root }, { seal: true, policy: asked, beside: cpPath });
          if (typeof b === 'number') return b;
          log = b;
        }
      }
      if (json) println(io.stdout, JSON.stringify({ ...r, ...(cosignedBy === undefined ? {} : { cosignedBy }), ...(log === undefined ? {} : { logBinding: logBoundJson(log) }) }));
      if (!json) {
        println(io.stdout, `valid: grade of session ${r.statement.sessionId} (${r.statement.size} entries, root ${r.statement.receiptRoot})`);
        println(io.stdout, `grade        ${canonicalJson(r.statement.grade)}`);
        println(io.stdout, `signed by    ${r.signedBy.map((s) => `${s.name}+${formatKeyId(s.keyId)}`).join(', ')}`);
        if (cosignedBy !== undefined) println(io.stdout, `cosigned by  ${cosignedBy.length === 0 ? '(none required)' : cosignedBy.join(', ')} (witness quorum met)`);
        if (log !== undefined) println(io.stdout, logBoundLine(log));
      }
      return EXIT.ok;
    }
    throw new CliError(sub === undefined ? "grade needs a subcommand: sign, verify or key. Run 'tally grade --help'." : `unknown grade subcommand '${sub}' (sign, verify or key)`);
  },
};
