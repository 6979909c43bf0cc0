/**
 * `tally demo --ap2`: a day under an AP2 v0.2 open payment mandate, end to
 * end on a real SQLite store. The user's mandate (budget USD 100, one
 * merchant, at most USD 50 a purchase) is the session's authority, recorded
 * verbatim in the genesis (PROTOCOL.md §16.1); each purchase is a frame (the
 * cart) and a turn (the agent's closed payment mandate), ruled by
 * `createAp2Ruler` from the history it derives from the store (§16.6). The
 * purchases within the budget are admitted, the one that would exceed it is
 * refused, the next that fits exactly is admitted. The merchant and the
 * credential provider are pinned in the spec; each admitted purchase's
 * checkout and payment receipts arrive in the next frame (§16.8), so every
 * later presentation has the receipt AP2 requires for the previous one. Then
 * the day is sealed with a signed receipt, exported, verified, replayed from
 * the bundle alone, and the `tally/ap2-evidence/1` pack of one transaction is
 * written, read back and checked offline by AP2's five dispute steps (§16.9),
 * with the single-turn receipt of its turn.
 *
 * Deterministic (public test keys, RFC 6979 signatures, counted salts): the
 * same receipt root on every machine. Re-running into the same directory
 * reuses the sealed day.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyBundleFile } from '../codec/index.js';
import { assembleAp2Evidence, b64sha256, createAp2Ruler, minorUnits, verifyAp2Evidence } from '../mandates/index.js';
import { TallyError } from '../protocol/errors.js';
import { canonicalJson, type CanonicalObject, type Entry } from '../protocol/index.js';
import { createNotary, openSessionCheckpoint, replayFile, verifyTurnReceipt } from '../receipt/index.js';
import { Engine, type Receipt } from '../session/index.js';
import { openStore } from '../store/index.js';
import { AP2_DEMO_AUDIENCE, AP2_DEMO_BUDGET, ap2DemoKey, ap2DemoOpenMandate, ap2DemoParties, ap2DemoPurchase, ap2DemoReceipts } from './ap2-credentials.js';
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

/** The genesis spec of the AP2 demo day (the mandate verbatim, the user's key, the audience, the pinned merchant and provider). */
export async function ap2DemoSpec(): Promise<CanonicalObject> {
  const iat = AP2_DEMO_START_MS / 1000 - 3_600;
  const mandate = await ap2DemoOpenMandate({ iat, exp: iat + 7 * 86_400 });
  return { name: 'tally-demo ap2', ap2: { mandate, issuer: ap2DemoKey('user').publicKey as CanonicalObject, audience: AP2_DEMO_AUDIENCE, ...(ap2DemoParties() as unknown as CanonicalObject) } };
}

const fail = (message: string, details?: string): never => {
  throw new TallyError('TALLY_DEMO_DIVERGED', message, details === undefined ? {} : { details });
};

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
    // Each frame also carries the receipts answering the previous purchase when it was admitted (§16.8).
    const purchases: Ap2DemoPurchase[] = [];
    let answered: { type: string; jwt: string }[] = [];
    for (const [i, p] of AP2_DEMO_PURCHASES.entries()) {
      const time = AP2_DEMO_START_MS + i * HOUR;
      const built = await ap2DemoPurchase(mandate, { sku: p.sku, amount: p.amount, nonce: `demo-purchase-${i}`, iat: time / 1000 });
      const cart = { sku: p.sku, amount: p.amount, currency: 'USD' };
      const f = await engine.frame({ sessionId, ordinal: i - 1, time, data: answered.length === 0 ? { cart } : { cart, ap2: { receipts: answered } } });
      if (!f.ok) fail(`purchase ${i}: the frame was refused: ${f.diagnostic}`, f.message);
      const fr = f as { entryHash: string; frameRoot: string; ordinal: number };
      const t = await engine.turn({ sessionId, ordinal: fr.ordinal, parentHash: fr.entryHash, frameRoot: fr.frameRoot, body: { kind: 'authored', bytes: built.body } });
      if (!t.ok) fail(`purchase ${i}: the turn was refused: ${t.diagnostic}`, t.message);
      const tr = t as { index: number; ruling?: CanonicalObject };
      const a = (tr.ruling?.['ap2'] ?? {}) as Record<string, unknown>;
      answered = a['admitted'] === true ? ap2DemoReceipts(built, { n: i, iat: time / 1000 + 60 }) : [];
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

    // ── the transaction's tally/ap2-evidence/1 pack (as tally evidence --transaction writes it), read back, its five dispute steps ──
    const target = purchases[EVIDENCE_OF]!;
    const entries = (await readFile(files.bundle, 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Entry);
    const built = await assembleAp2Evidence(entries, sessionId, target.transactionId, async (i) => {
      const r = await notary.turnReceipt(engine, sessionId, i, { signedCheckpoint });
      return r.ok ? { ok: true, text: r.text, signedCheckpoint } : { ok: false, message: `${r.code}: ${r.message}` };
    });
    if (built.ok) await writeFile(files.evidence, `${canonicalJson(built.pack as unknown as CanonicalObject)}\n`);
    const checked = built.ok ? await verifyAp2Evidence(JSON.parse(await readFile(files.evidence, 'utf8')), { verifiers: [key.verifierKey] }) : built;
    const evidence: Check & { transactionId: string } = !checked.ok
      ? { ok: false, detail: `${checked.code}: ${checked.message}`, transactionId: target.transactionId }
      : { ok: checked.complete, detail: `${checked.admitted ? 'admitted' : 'refused'} payment of ${checked.amount} ${checked.currency} minor units; dispute steps ${checked.steps.map((x) => `${x.step} ${x.outcome}`).join(', ')}`, transactionId: target.transactionId };
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
