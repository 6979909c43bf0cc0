/**
 * `tally demo --ap2`: a day under an AP2 v0.2 open payment mandate, end to
 * end on a real SQLite store. The user's mandate (budget USD 100, one
 * merchant, at most USD 50 a purchase) is the session's authority, recorded
 * verbatim in the genesis (PROTOCOL.md §16.1); each purchase is a frame (the
 * cart) and a turn (the agent's closed payment mandate), ruled by
 * `createAp2Ruler` from the history it derives from the store (§16.6). The
 * purchases within the budget are admitted, the one that would exceed it is
 * refused, the next that fits exactly is admitted. Then the day is sealed
 * with a signed receipt, exported, verified, replayed from the bundle alone,
 * and the evidence of one transaction is retrieved by its `transaction_id`
 * (§16.7), written, read back and re-verified offline, with the single-turn
 * receipt of its turn.
 *
 * Deterministic (public test keys, RFC 6979 signatures, counted salts): the
 * same receipt root on every machine. Re-running into the same directory
 * reuses the sealed day.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyBundleFile } from '../codec/index.js';
import { b64sha256, checkAp2Evidence, createAp2Ruler, findAp2Transaction, minorUnits, type Ap2Evidence } from '../mandates/index.js';
import { TallyError } from '../protocol/errors.js';
import type { CanonicalObject } from '../protocol/index.js';
import { createNotary, openSessionCheckpoint, replayFile, verifyTurnReceipt } from '../receipt/index.js';
import { Engine, type Receipt } from '../session/index.js';
import { openStore } from '../store/index.js';
import { AP2_DEMO_AUDIENCE, AP2_DEMO_BUDGET, ap2DemoKey, ap2DemoOpenMandate, ap2DemoPurchase } from './ap2-credentials.js';
import { DEMO_ENGINE_NAME, demoEngineKey } from './keys.js';
import { exportBundle } from './export.js';
import type { Check } from './run.js';

/** The day's first frame, 2030-01-15T09:00:00Z (ms); one purchase an hour after it. */
export const AP2_DEMO_START_MS = Date.UTC(2030, 0, 15, 9);
const HOUR = 3_600_000;

/** The purchases of the day, in order: amounts in USD cents. The fourth would exceed the budget. */
export const AP2_DEMO_PURCHASES = Object.freeze([
  { sku: 'atlas-of-rivers', amount: 3_500 },
  { sku: 'field-guide-birds', amount: 4_250 },
  { sku: 'pocket-star-chart', amount: 1_800 },
  { sku: 'encyclopedia-vol-1', amount: 1_200 },
  { sku: 'bookmark-set', amount: 450 },
] as const);
/** Which purchase's evidence is retrieved (0-based): the second, admitted. */
const EVIDENCE_OF = 1;

/** One purchase as the day ruled it. */
export interface Ap2DemoPurchase {
  readonly sku: string;
  readonly amount: number;
  readonly transactionId: string;
  readonly index: number;
  readonly admitted: boolean;
  readonly spentBefore: number;
  /** The refusal code and the constraints broken, when refused. */
  readonly code?: string;
  readonly violations?: readonly string[];
}

/** What {@link runAp2Demo} reports (`tally demo --ap2 --json` prints it). */
export interface Ap2DemoReport {
  readonly sessionId: string;
  readonly mode: 'new' | 'reused';
  readonly mandate: string;
  readonly budget: { readonly currency: string; readonly max: number; readonly minor: number; readonly spent: number };
  readonly purchases: readonly Ap2DemoPurchase[];
  readonly receipt: Receipt;
  readonly verifierKey: string;
  readonly checks: { readonly bundle: Check; readonly receipt: Check; readonly replay: Check; readonly evidence: Check & { readonly transactionId: string }; readonly proof: Check };
  readonly files: { readonly dir: string; readonly db: string; readonly bundle: string; readonly checkpoint: string; readonly verifierKey: string; readonly evidence: string; readonly proof: string; readonly summary: string };
}

/** The genesis spec of the AP2 demo day (the mandate verbatim, the user's key, the audience). */
export async function ap2DemoSpec(): Promise<CanonicalObject> {
  const iat = AP2_DEMO_START_MS / 1000 - 3_600;
  const mandate = await ap2DemoOpenMandate({ iat, exp: iat + 7 * 86_400 });
  return { name: 'tally-demo ap2', ap2: { mandate, issuer: ap2DemoKey('user').publicKey as CanonicalObject, audience: AP2_DEMO_AUDIENCE } };
}

const fail = (message: string, details?: string): never => {
  throw new TallyError('TALLY_DEMO_DIVERGED', message, details === undefined ? {} : { details });
};

/** Evidence as a file: the pack's entry bytes in base64, beside where they sit. */
function evidenceJson(e: Ap2Evidence): string {
  const b = (u: Uint8Array) => Buffer.from(u).toString('base64');
  return JSON.stringify({ format: 'tally/ap2-evidence/0', transaction_id: e.transactionId, session: e.sessionId, index: e.index, genesis: b(e.genesis), frame: b(e.frame), turn: b(e.turn) }, null, 2) + '\n';
}
function evidenceOf(text: string): Ap2Evidence {
  const v = JSON.parse(text) as Record<string, string | number>;
  const u = (k: string) => new Uint8Array(Buffer.from(String(v[k]), 'base64'));
  return { transactionId: String(v['transaction_id']), sessionId: String(v['session']), index: Number(v['index']), genesis: u('genesis'), frame: u('frame'), turn: u('turn') };
}

/**
 * Runs the AP2 day into `out`. Throws `TallyError` when the store is unusable
 * or the recorded day differs from the script; failed checks are reported.
 *
 * @example
 * const r = await runAp2Demo({ out: 'tally-demo-ap2' });
 * r.purchases.map((p) => p.admitted); // [true, true, true, false, true]
 */
export async function runAp2Demo(options: { readonly out: string }): Promise<Ap2DemoReport> {
  const out = options.out;
  const files = {
    dir: out, db: join(out, 'tally.db'), bundle: join(out, 'bundle.jsonl'), checkpoint: join(out, 'receipt.note'), verifierKey: join(out, 'engine.vkey'),
    evidence: join(out, 'evidence.json'), proof: join(out, 'evidence.tlog-proof'), summary: join(out, 'summary.json'),
  };
  await mkdir(out, { recursive: true });
  const spec = await ap2DemoSpec();
  const mandate = (spec['ap2'] as CanonicalObject)['mandate'] as string;
  const store = await openStore(files.db);
  try {
    const engine = new Engine({ store, ruler: createAp2Ruler({ store }) });
    const opened = await engine.open(spec);
    if (!opened.ok) fail(`the AP2 demo session was refused: ${opened.diagnostic}`, opened.message);
    const sessionId = (opened as { sessionId: string }).sessionId;
    const before = await engine.describe(sessionId);
    const mode = before.ok && before.phase === 'sealed' ? 'reused' : 'new';

    // ── record: each purchase answers its own frame (the cart); retried slots are duplicates ──
    const purchases: Ap2DemoPurchase[] = [];
    for (const [i, p] of AP2_DEMO_PURCHASES.entries()) {
      const time = AP2_DEMO_START_MS + i * HOUR;
      const built = await ap2DemoPurchase(mandate, { sku: p.sku, amount: p.amount, nonce: `demo-purchase-${i}`, iat: time / 1000 });
      const f = await engine.frame({ sessionId, ordinal: i - 1, time, data: { cart: { sku: p.sku, amount: p.amount, currency: 'USD' } }});
      if (!f.ok) fail(`purchase ${i}: the frame was refused: ${f.diagnostic}`, f.message);
      const fr = f as { entryHash: string; frameRoot: string; ordinal: number };
      const t = await engine.turn({ sessionId, ordinal: fr.ordinal, parentHash: fr.entryHash, frameRoot: fr.frameRoot, body: { kind: 'authored', bytes: built.body } });
      if (!t.ok) fail(`purchase ${i}: the turn was refused: ${t.diagnostic}`, t.message);
      const tr = t as { index: number; ruling?: CanonicalObject };
      const a = (tr.ruling?.['ap2'] ?? {}) as Record<string, unknown>;
      purchases.push({
        sku: p.sku, amount: p.amount, transactionId: built.transactionId, index: tr.index, admitted: a['admitted'] === true, spentBefore: Number(a['spent_before'] ?? 0),
        ...(a['admitted'] === true ? {} : { code: String(a['code']), violations: (a['violations'] as string[] | undefined) ?? [] }),
      });
    }

    // ── seal with the signed receipt, export ──
    const key = demoEngineKey();
    const notary = createNotary({ key });
    let receipt: Receipt, signedCheckpoint: string;
    if (mode === 'reused') {
      const d = await engine.describe(sessionId);
      const cp = await notary.issueCheckpoint(engine, sessionId);
      if (!d.ok || !d.receipt || !cp.ok) return fail('the sealed AP2 demo day cannot be re-certified');
      receipt = d.receipt;
      signedCheckpoint = cp.signedCheckpoint;
    } else {
      const sealed = await notary.sealWithReceipt(engine, sessionId, { runtime: 'tally-demo-ap2' });
      if (!sealed.ok) return fail(`the seal was refused: ${sealed.diagnostic}`, sealed.message);
      receipt = sealed.receipt;
      signedCheckpoint = sealed.signedCheckpoint;
    }
    await exportBundle(engine, sessionId, files.bundle);
    await writeFile(files.checkpoint, signedCheckpoint);
    await writeFile(files.verifierKey, key.verifierKey + '\n');
    const pin = { sessionId, size: receipt.size, receiptRoot: receipt.receiptRoot };

    // ── verify the bundle and the receipt, replay every ruling from the bundle alone ──
    const v = await verifyBundleFile(files.bundle, { requireSealed: true, pin });
    const bundle: Check = v.ok ? { ok: true, detail: `${v.size} entries (${v.frames} frames, ${v.turns} turns), sealed` } : { ok: false, detail: `entry ${v.index}: ${v.code}: ${v.message}` };
    const cp = openSessionCheckpoint(signedCheckpoint, [key.verifierKey], { sessionId });
    const receiptCheck: Check = !cp.ok
      ? { ok: false, detail: `${cp.stage}: ${cp.code}: ${cp.message}` }
      : cp.checkpoint.size === receipt.size && cp.checkpoint.root === receipt.receiptRoot
        ? { ok: true, detail: `signed by ${DEMO_ENGINE_NAME} over all ${receipt.size} entries` }
        : { ok: false, detail: 'the signed checkpoint is not the sealed day' };
    const replayed = await replayFile(files.bundle, { ruler: (s) => createAp2Ruler({ store: s }), pin });
    const replay: Check = replayed.ok
      ? { ok: true, detail: `${replayed.size} entries re-derived, ${replayed.rulings} rulings identical` }
      : replayed.stage === 'chain'
        ? { ok: false, detail: `entry ${replayed.index}: ${replayed.code}: ${replayed.message}` }
        : { ok: false, detail: `entry ${replayed.divergences[0]?.index}: ${replayed.divergences[0]?.kind}: ${replayed.divergences[0]?.message}` };

    // ── retrieval by transaction_id: the pack, written, read back, checked offline; its turn's receipt ──
    const target = purchases[EVIDENCE_OF]!;
    const found = await findAp2Transaction(store, target.transactionId);
    let evidence: Check & { transactionId: string } = { ok: false, detail: `${found.length} turns name the transaction`, transactionId: target.transactionId };
    if (found.length === 1) {
      await writeFile(files.evidence, evidenceJson(found[0]!));
      const checked = await checkAp2Evidence(evidenceOf(await readFile(files.evidence, 'utf8')));
      evidence = checked.ok
        ? { ok: true, detail: `${checked.value.admitted ? 'admitted' : 'refused'} payment of ${checked.value.amount} ${checked.value.currency} minor units, open and closed mandates re-verified at the frame's time`, transactionId: target.transactionId }
        : { ok: false, detail: `${checked.code}: ${checked.message}`, transactionId: target.transactionId };
    }
    const turnReceipt = await notary.turnReceipt(engine, sessionId, target.index, { signedCheckpoint });
    let proof: Check = { ok: false, detail: turnReceipt.ok ? '' : `${turnReceipt.code}: ${turnReceipt.message}` };
    if (turnReceipt.ok) {
      await writeFile(files.proof, turnReceipt.text);
      const pv = verifyTurnReceipt(turnReceipt.text, { verifiers: [key.verifierKey], pin });
      proof = pv.ok ? { ok: true, detail: `entry ${pv.index} (the transaction's turn) is in the signed tree of ${pv.checkpoint.size} entries` } : { ok: false, detail: `${pv.stage}: ${pv.code}: ${pv.message}` };
    }

    const minor = minorUnits(AP2_DEMO_BUDGET.max, AP2_DEMO_BUDGET.currency);
    const budgetMinor = minor.ok ? minor.value : fail('the demo budget is not exact');
    const spent = purchases.filter((p) => p.admitted).reduce((s, p) => s + p.amount, 0);
    const report: Ap2DemoReport = {
      sessionId, mode, mandate: b64sha256(mandate),
      budget: { currency: AP2_DEMO_BUDGET.currency, max: AP2_DEMO_BUDGET.max, minor: budgetMinor, spent },
      purchases, receipt, verifierKey: key.verifierKey,
      checks: { bundle, receipt: receiptCheck, replay, evidence, proof },
      files,
    };
    await writeFile(files.summary, JSON.stringify(report, null, 2) + '\n');
    return report;
  } finally {
    await store.close();
  }
}
