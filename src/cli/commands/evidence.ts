import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { canonicalJson, isDigestHex, type CanonicalObject, type Entry } from '../../protocol/index.js';
import { bundleFileChunks, indexBundle, peekSessionCheckpoint, turnReceiptFromBundle } from '../../receipt/index.js';
import { assemblePaymentEvidence, verifyPaymentEvidence, type PaymentSelector } from '../../payments/index.js';
import { AP2_EVIDENCE_FORMAT, assembleAp2Evidence, verifyAp2Evidence, type Ap2PackFacts } from '../../mandates/index.js';
import { CliError, EXIT, println, str, type Command } from '../command.js';
import { readTextFile, verifierKeysFor, writeTextFile } from './checkpoint.js';
import { WITNESS_POLICY_HELP, WITNESS_POLICY_OPTIONS, printWitnessFailure, witnessPolicyFor } from './witness-policy.js';

function selectorOf(v: string): PaymentSelector {
  if (/^[1-9][0-9]{0,9}$/.test(v)) return { ticket: Number(v) };
  if (isDigestHex(v)) return { paymentHash: v };
  const m = /^(0x[0-9a-fA-F]{40}):(0x[0-9a-fA-F]{40}):(0|[1-9][0-9]*):(0x[0-9a-fA-F]{64})$/.exec(v);
  if (m) return { payer: m[1]!, payTo: m[2]!, value: m[3]!, nonce: m[4]! };
  throw new CliError('--payment takes a ticket number, a payment hash (64 hex), or payer:payTo:value:nonce');
}

export const evidenceCommand: Command = {
  name: 'evidence',
  summary: 'Write the dispute evidence pack of one x402 payment or one AP2 transaction, each entry with its inclusion proof under the checkpoint.',
  help: `Usage: tally evidence <bundle.jsonl> --payment <ticket|payment-hash|payer:payTo:value:nonce> --checkpoint <file> --vkey <vkey|file> [--out <file>]
       tally evidence <bundle.jsonl> --transaction <transaction_id> --checkpoint <file> --vkey <vkey|file> [--out <file>]

With --transaction (an AP2 session, docs/PROTOCOL.md §16.9): writes a pack
of format tally/ap2-evidence/1 holding the genesis (the open mandate and the
pinned merchant and credential provider keys), the frame and turn of the
purchase whose checkout_hash is <transaction_id> (checkout JWT, closed payment
mandate, ruling), and every frame of the session carrying a receipt about it.

Writes one self-contained pack (format tally/x402-evidence/1, docs/PROTOCOL.md
§17.8) for the payment named: single-turn receipts of the genesis (the
mandate, its principal's signature and the payment policy), the frame with the
offer the agent saw, the turn with the signed PaymentPayload and its ruling,
and every frame and turn with a settlement fact about its ticket, all under
the signed checkpoint you pass (the day's sealed receipt). Signs nothing.
Check it with 'tally verify-evidence <pack> --vkey <vkey>'.

Exit codes: 0 written, 1 no such payment or the checkpoint is not of this
bundle, 2 usage error, 3 I/O error.`,
  renamedOptions: () => ({ key: 'vkey' }),
  options: { payment: { type: 'string' }, transaction: { type: 'string' }, checkpoint: { type: 'string' }, vkey: { type: 'string' }, key: { type: 'string' }, out: { type: 'string' } },
  async run({ values, positionals }, io) {
    const path = positionals[0];
    if (!path || positionals.length > 1) throw new CliError("evidence takes exactly one bundle path. Run 'tally evidence --help'.");
    const payment = str(values, 'payment');
    const transaction = str(values, 'transaction');
    if ((payment === undefined) === (transaction === undefined)) throw new CliError('one of --payment <ticket|payment-hash|payer:payTo:value:nonce> (x402) or --transaction <transaction_id> (AP2) is required');
    if (transaction !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(transaction)) throw new CliError('--transaction takes an AP2 transaction_id: 43 base64url characters (the checkout_hash)');
    const select = payment === undefined ? undefined : selectorOf(payment);
    const cpPath = str(values, 'checkpoint');
    if (cpPath === undefined || str(values, 'vkey') === undefined) throw new CliError('--checkpoint <file> and --vkey <vkey> are required: evidence signs nothing');
    const verifiers = await verifierKeysFor(values, io);
    const bundlePath = resolve(io.cwd, path);
    if (!existsSync(bundlePath)) throw new CliError(`cannot read ${bundlePath}: no such file`, EXIT.io, 'TALLY_CLI_IO');
    const signedCheckpoint = readTextFile(cpPath, io, 'the checkpoint');
    const peeked = peekSessionCheckpoint(signedCheckpoint);
    if (!peeked) throw new CliError(`${cpPath} is not a signed Tally session checkpoint`, EXIT.invalid, 'TALLY_CLI_INVALID');
    const lines = readFileSync(bundlePath, 'utf8').split('\n').filter((l) => l.length > 0);
    const entries = lines.map((l) => JSON.parse(l) as Entry);
    const ix = await indexBundle(bundleFileChunks(bundlePath), { entries: entries.map((_e, i) => i), sizes: [peeked.size], requireSealed: false });
    if (!ix.ok) {
      println(io.stderr, `invalid: entry ${ix.index}: ${ix.code}: ${ix.message}`);
      return EXIT.invalid;
    }
    const prove = async (index: number) => {
      const r = turnReceiptFromBundle(ix, index, signedCheckpoint, { verifiers });
      return r.ok ? { ok: true as const, text: r.text, signedCheckpoint } : { ok: false as const, message: `${r.code}: ${r.message}` };
    };
    const built = select === undefined ? await assembleAp2Evidence(entries, ix.summary.sessionId, transaction!, prove) : await assemblePaymentEvidence(entries, ix.summary.sessionId, select, prove);
    if (!built.ok) {
      println(io.stderr, `tally evidence: ${built.code}: ${built.message}`);
      return EXIT.invalid;
    }
    const text = `${canonicalJson(built.pack as unknown as CanonicalObject)}\n`;
    const out = str(values, 'out');
    if (out === undefined) io.stdout.write(text);
    else println(io.stdout, `evidence for ${payment === undefined ? `transaction ${transaction!}` : `payment ${payment}`} (${built.pack.entries.length} receipts, session ${built.pack.session}) written to ${writeTextFile(out, text, io, 'the pack')}`);
    return EXIT.ok;
  },
};

export const verifyEvidenceCommand: Command = {
  name: 'verify-evidence',
  summary: "Verify an x402 payment's or an AP2 transaction's evidence pack offline with the engine's verifier key alone, and name its dispute reasons or steps.",
  help: `Usage: tally verify-evidence <pack.json> --vkey <vkey|file> [--witness <vkey>... [--quorum k] | --policy <file>] [--json]

Checks every receipt of the pack against its signed checkpoint and the pinned
key, the mandate's principal signature, re-derives the payment's ruling from
the offer and the signed payload (every rule that needs no other entry), re-
verifies every judge's signed answer when the payment policy names judges
(each by its named key, over this payment's request, and the quorum), and
re-checks any chain receipt that reconciled it. Prints the payment, its final
settlement state and the reason codes a dispute needs (authority_exceeded,
counterparty_mismatch, offer_drift, duplicate_execution, settlement_unknown).

An AP2 pack (tally/ap2-evidence/1, PROTOCOL.md §16.9) is recognised by its
format: every entry's inclusion proof is checked, then AP2's five dispute
steps run offline, each printed with its outcome (pass, fail with a code, or
missing): 1 checkout-mandate, 2 checkout-hash, 3 checkout-receipt,
4 payment-mandate, 5 payment-receipt. Valid (exit 0) only when all five pass.

With a witness policy the pack's sealed checkpoint must also carry the
witnesses' cosignatures (checked first, as tally verify --checkpoint does).

Options:
  --vkey <vkey|file>  the engine's verifier key, or a file of them
${WITNESS_POLICY_HELP}
  --json            print the result as one JSON line

Exit codes: 0 valid, 1 invalid, 2 usage error, 3 I/O error.`,
  renamedOptions: () => ({ key: 'vkey' }),
  options: { vkey: { type: 'string' }, key: { type: 'string' }, json: { type: 'boolean' }, ...WITNESS_POLICY_OPTIONS },
  async run({ values, positionals }, io) {
    const path = positionals[0];
    if (!path || positionals.length > 1) throw new CliError("verify-evidence takes exactly one pack file. Run 'tally verify-evidence --help'.");
    if (str(values, 'vkey') === undefined) throw new CliError('--vkey <vkey> is required');
    const verifiers = await verifierKeysFor(values, io);
    const policy = await witnessPolicyFor(values, io);
    let pack: unknown;
    try {
      pack = JSON.parse(readTextFile(path, io, 'the pack'));
    } catch (e) {
      if (e instanceof CliError) throw e;
      pack = undefined;
    }
    let cosigned: readonly string[] | undefined;
    const checkpoint = typeof pack === 'object' && pack !== null ? (pack as { checkpoint?: unknown }).checkpoint : undefined;
    if (policy !== undefined && typeof checkpoint === 'string') {
      // The witnesses cosign the day's sealed checkpoint the pack's receipts are under.
      const { checkWitnessPolicy } = await import('../../witness/index.js');
      const w = checkWitnessPolicy(checkpoint, verifiers, policy);
      if (!w.ok) {
        if (values['json'] === true) println(io.stdout, JSON.stringify({ ...w, stage: 'witnesses' }));
        printWitnessFailure(io, 'the pack checkpoint', w);
        return EXIT.invalid;
      }
      cosigned = w.signed;
    }
    if (typeof pack === 'object' && pack !== null && (pack as Record<string, unknown>)['format'] === AP2_EVIDENCE_FORMAT) return ap2Verdict(await verifyAp2Evidence(pack, { verifiers }), values['json'] === true, io, cosigned);
    const r = await verifyPaymentEvidence(pack, { verifiers });
    if (values['json'] === true) println(io.stdout, JSON.stringify(r));
    if (!r.ok) {
      println(io.stderr, `invalid: ${r.code}: ${r.message}`);
      return EXIT.invalid;
    }
    if (values['json'] !== true) {
      const p = r.payment;
      println(io.stdout, `valid: payment ${p.payment_hash} in session ${r.session} (checkpoint size ${r.checkpoint.size}), mandate signed by ${r.principal}`);
      println(io.stdout, p.admitted ? `admitted: ticket ${p.ticket}, ${p.value} of ${p.asset} from ${p.payer} to ${p.pay_to}, final state ${r.state}${r.transaction ? ` (${r.transaction})` : ''}` : `refused: ${p.code}: ${p.message}`);
      const v = p.verdict;
      if (v !== undefined) println(io.stdout, `judges: ${v.quorum ? `${v.quorum.allow} of ${v.quorum.n} allowed (quorum ${v.quorum.k})` : `${v.model ?? '-'} ${v.decision ?? v.failure ?? v.code ?? ''}`}, every signed answer re-verified`);
      println(io.stdout, `ruling ${r.rederived ? 're-derived from the pack' : 'as recorded (it depends on earlier entries)'}; reasons: ${r.reasons.length ? r.reasons.join(', ') : 'none'}`);
      if (cosigned !== undefined) println(io.stdout, `cosigned by  ${cosigned.join(', ')} (witness quorum met)`);
    }
    return EXIT.ok;
  },
};

/** Prints an AP2 pack's verdict: the five steps, each with its outcome. */
function ap2Verdict(r: Ap2PackFacts | { ok: false; code: string; message: string }, json: boolean, io: Parameters<Command['run']>[1], cosigned: readonly string[] | undefined): number {
  if (json) println(io.stdout, JSON.stringify(r));
  if (!r.ok) {
    println(io.stderr, `invalid: ${r.code}: ${r.message}`);
    return EXIT.invalid;
  }
  if (!json) {
    println(io.stdout, `transaction ${r.transaction_id} in session ${r.session} (checkpoint size ${r.checkpoint.size}): every entry included; ruled ${r.admitted ? 'admitted' : `refused (${String(r.ruling['code'])})`}${r.amount === undefined ? '' : `, ${r.amount} ${r.currency!} minor units`}`);
    for (const s of r.steps) println(io.stdout, `step ${s.step} ${s.name}: ${s.outcome}${s.code ? ` ${s.code}` : ''}: ${s.detail}`);
  }
  if (!r.complete) {
    const s = r.steps.find((x) => x.outcome !== 'pass')!;
    println(io.stderr, `invalid: step ${s.step} ${s.name}: ${s.outcome === 'missing' ? 'receipt-missing' : s.code!}`);
    return EXIT.invalid;
  }
  if (!json) println(io.stdout, 'valid: all five dispute steps pass');
  if (!json && cosigned !== undefined) println(io.stdout, `cosigned by  ${cosigned.join(', ')} (witness quorum met)`);
  return EXIT.ok;
}
