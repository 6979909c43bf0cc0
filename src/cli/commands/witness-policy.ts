/**
 * The grader's witness-policy options, shared by `verify --checkpoint`,
 * `verify-proof` and `grade verify`: `--witness <vkey>` (repeatable) with
 * `--quorum k`, or `--policy <file>` (Sigsum policy format).
 */
import type { WitnessPolicy } from '../../witness/index.js';
import { CliError, println, str, type CommandIO } from '../command.js';
import { countOption, readTextFile } from './checkpoint.js';

type Values = Record<string, unknown>;

/** parseArgs options of the witness policy. */
export const WITNESS_POLICY_OPTIONS = {
  witness: { type: 'string', multiple: true },
  quorum: { type: 'string' },
  policy: { type: 'string' },
} as const;

/** Help lines of the witness policy options. */
export const WITNESS_POLICY_HELP = `  --witness <vkey>  require cosignatures: a witness verifier key (name+keyid+
                    base64 of 0x04||key, from 'tally witness print-key');
                    repeatable
  --quorum <k>      how many of the --witness keys must have cosigned
                    (default: all of them)
  --policy <file>   a witness policy file instead (Sigsum policy format:
                    witness/group/quorum lines; docs/PROTOCOL.md §12)`;

/** The policy the options ask for, or `undefined` when no witness option is given. Usage errors for bad keys or files. */
export async function witnessPolicyFor(values: Values, io: CommandIO): Promise<WitnessPolicy | undefined> {
  const raw = values['witness'];
  const vkeys = Array.isArray(raw) ? raw.filter((x): x is string => typeof x === 'string') : typeof raw === 'string' ? [raw] : [];
  const file = str(values, 'policy');
  const k = countOption(values, 'quorum');
  if (file === undefined && vkeys.length === 0) {
    if (k !== undefined) throw new CliError('--quorum needs --witness <vkey> (one or more)');
    return undefined;
  }
  if (file !== undefined && (vkeys.length > 0 || k !== undefined)) throw new CliError('give either --policy or --witness/--quorum, not both');
  const { parseWitnessPolicy, quorumPolicy } = await import('../../witness/index.js');
  const r = file !== undefined ? parseWitnessPolicy(readTextFile(file, io, 'the witness policy')) : quorumPolicy(vkeys, k ?? vkeys.length);
  if (!r.ok) throw new CliError(`${file !== undefined ? `--policy ${file}` : '--witness/--quorum'}: ${r.message}`);
  return r.policy;
}

/** Prints a witness-stage refusal (stderr line; names who cosigned and who did not). */
export function printWitnessFailure(io: CommandIO, what: string, f: { readonly code: string; readonly message: string }): void {
  println(io.stderr, `invalid: ${what}: witnesses: ${f.code}: ${f.message}`);
}
