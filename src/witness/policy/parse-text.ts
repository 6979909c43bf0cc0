/**
 * Witness policies without a platform: the Sigsum policy text and the
 * `--witness`/`--quorum` keys, with each witness key bound by `bind`
 * (node:crypto in ./parse.ts; WebCrypto answers in the audit page).
 */
import { fromHex } from '../../protocol/index.js';
import { isValidKeyName } from '../../receipt/note/name.js';
import { formatCosignerVerifierKey, parseCosignerVerifierKeyWith, type Ed25519Check } from '../cosignature/verifier.js';
import type { PolicyWitness, QuorumRule, WitnessPolicy } from './types.js';

/** Binds a raw Ed25519 public key to a check (`undefined`: the key verifies nothing). */
export type BindEd25519 = (publicKey: Uint8Array) => Ed25519Check | undefined;

/** Outcome of {@link parseWitnessPolicy} and {@link quorumPolicy}. */
export type ParsePolicyResult = { readonly ok: true; readonly policy: WitnessPolicy } | { readonly ok: false; readonly code: 'malformed-policy'; readonly line: number; readonly message: string };

const HEX32 = /^[0-9a-f]{64}$/;
const URL_RE = /^https?:\/\/\S+$/;

/**
 * Parses a policy file in the Sigsum policy format
 * (https://git.glasklar.is/sigsum/core/sigsum-go/-/blob/main/doc/policy.md),
 * one directive per line, `#` comments and blank lines ignored:
 *
 *     log <hex Ed25519 key> [url]
 *     witness <name> <hex Ed25519 key> [url]
 *     group <name> <k|all|any> <member> <member>…
 *     quorum <name|none>
 *
 * Tally's reading, documented in docs/PROTOCOL.md §12: a witness's `<name>`
 * is also its cosignature key name (the C2SP key ID commits to it), so it must
 * be a valid note key name; names are unique and defined before use; a group
 * needs 1 ≤ k ≤ members, distinct members; exactly one `quorum` line. `log`
 * lines, when present, restrict which engine keys may sign the checkpoint.
 * Anything else is refused with its line number.
 *
 * @example
 * const r = parseWitnessPolicyWith('witness w1.example 8f…\nwitness w2.example 1c…\ngroup g 2 w1.example w2.example\nquorum g\n', nodeEd25519);
 */
export function parseWitnessPolicyWith(text: string, bind: BindEd25519): ParsePolicyResult {
  const witnesses: PolicyWitness[] = [];
  const rules = new Map<string, QuorumRule>([['none', { kind: 'none' }]]);
  const logKeys: Uint8Array[] = [];
  let quorum: QuorumRule | undefined;
  const lines = typeof text === 'string' ? text.split('\n') : [];
  const bad = (i: number, message: string): ParsePolicyResult => ({ ok: false, code: 'malformed-policy', line: i + 1, message: `line ${i + 1}: ${message}` });
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/#.*$/, '').trim();
    if (line === '') continue;
    const [word, ...args] = line.split(/[ \t]+/);
    if (word === 'log') {
      if (args.length < 1 || args.length > 2 || !HEX32.test(args[0]!) || (args[1] !== undefined && !URL_RE.test(args[1]))) return bad(i, 'expected: log <64 hex key> [url]');
      logKeys.push(fromHex(args[0]!));
    } else if (word === 'witness') {
      const [name, hex, url] = args;
      if (args.length < 2 || args.length > 3 || !isValidKeyName(name!) || !HEX32.test(hex!) || (url !== undefined && !URL_RE.test(url))) return bad(i, 'expected: witness <name> <64 hex key> [url]');
      if (rules.has(name!)) return bad(i, `name ${name} is already defined`);
      const v = parseCosignerVerifierKeyWith(formatCosignerVerifierKey(name!, fromHex(hex!)), bind);
      if (!v.ok) return bad(i, v.message);
      witnesses.push({ name: name!, verifier: v.verifier, ...(url === undefined ? {} : { url }) });
      rules.set(name!, { kind: 'witness', name: name! });
    } else if (word === 'group') {
      const [name, k, ...members] = args;
      if (name === undefined || k === undefined || members.length === 0) return bad(i, 'expected: group <name> <k|all|any> <member>…');
      if (rules.has(name)) return bad(i, `name ${name} is already defined`);
      if (new Set(members).size !== members.length) return bad(i, 'a group lists a member twice');
      const rs: QuorumRule[] = [];
      for (const m of members) {
        const r = rules.get(m);
        if (r === undefined || m === 'none') return bad(i, `unknown member ${m} (define witnesses and groups before use)`);
        rs.push(r);
      }
      const threshold = k === 'all' ? members.length : k === 'any' ? 1 : /^[1-9][0-9]*$/.test(k) ? Number(k) : NaN;
      if (!Number.isSafeInteger(threshold) || threshold < 1 || threshold > members.length) return bad(i, `threshold must be all, any or 1 to ${members.length}`);
      rules.set(name, { kind: 'group', name, threshold, members: rs });
    } else if (word === 'quorum') {
      if (args.length !== 1) return bad(i, 'expected: quorum <name>');
      if (quorum !== undefined) return bad(i, 'a second quorum line');
      const r = rules.get(args[0]!);
      if (r === undefined) return bad(i, `unknown quorum ${args[0]}`);
      quorum = r;
    } else {
      return bad(i, `unknown directive ${JSON.stringify(word)}`);
    }
  }
  if (quorum === undefined) return { ok: false, code: 'malformed-policy', line: 0, message: 'the policy has no quorum line' };
  return { ok: true, policy: { witnesses, quorum, logKeys } };
}

/**
 * The policy of `--witness <vkey>`… `--quorum k`: these cosigner vkeys, any
 * `k` of them (default: all).
 *
 * @example
 * const r = quorumPolicyWith([w1Vkey, w2Vkey], 2, nodeEd25519);
 */
export function quorumPolicyWith(vkeys: readonly string[], k: number, bind: BindEd25519): ParsePolicyResult {
  const witnesses: PolicyWitness[] = [];
  for (let i = 0; i < vkeys.length; i++) {
    const v = parseCosignerVerifierKeyWith(vkeys[i]!, bind);
    if (!v.ok) return { ok: false, code: 'malformed-policy', line: i + 1, message: `witness key ${i + 1}: ${v.message}` };
    if (witnesses.some((w) => w.name === v.verifier.name)) return { ok: false, code: 'malformed-policy', line: i + 1, message: `two witness keys named ${v.verifier.name}` };
    witnesses.push({ name: v.verifier.name, verifier: v.verifier });
  }
  if (witnesses.length === 0) return { ok: false, code: 'malformed-policy', line: 0, message: 'a quorum needs at least one witness key' };
  if (!Number.isSafeInteger(k) || k < 1 || k > witnesses.length) return { ok: false, code: 'malformed-policy', line: 0, message: `quorum must be 1 to ${witnesses.length}` };
  const members: QuorumRule[] = witnesses.map((w) => ({ kind: 'witness', name: w.name }));
  return { ok: true, policy: { witnesses, quorum: { kind: 'group', name: 'quorum', threshold: k, members }, logKeys: [] } };
}
