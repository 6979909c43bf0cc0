/**
 * `tally demo --x402`: the x402 desk's day end to end on loopback. Starts a local chain (Hardhat
 * network, child process), deploys the EIP-3009 token from its shipped artifact, starts a
 * facilitator and three priced market-data endpoints, records the desk's day through Tally
 * (desk.ts), seals it, exports the bundle, the signed receipt and the verifier key, writes the
 * dispute evidence packs of the reconciled payment and of the offer_drift refusal, and verifies
 * all of it offline. Everything it starts it stops, on every exit path: a return, a throw, and
 * SIGINT/SIGTERM (then it stops the parts and exits 130/143); the chain child also exits when
 * this process dies any other way (its stdin closes).
 */
import { mkdir, writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeBundle } from '../codec/index.js';
import { canonicalJson, TallyError, type CanonicalObject, type Entry } from '../protocol/index.js';
import { assemblePaymentEvidence, createPaymentsRuler, verifyPaymentEvidence, type BudgetFigures, type PaymentsRuling } from '../payments/index.js';
import { createNotary, openSessionCheckpoint, replayFile } from '../receipt/index.js';
import { createRefereeRuler } from '../referee/index.js';
import { Engine } from '../session/index.js';
import { openStore } from '../store/index.js';
import { DEMO_ENGINE_NAME, demoEngineKey } from '../demo/keys.js';
import { startChain, type LocalChain } from './chain.js';
import { X402_DESK, X402_PRICES, runDesk, x402DeskSpec, type DeskStep } from './desk.js';
import { startFacilitator, startResource, type Listening } from './servers.js';
import { deployToken } from './token.js';

export interface X402DemoOptions {
  readonly out: string;
  /** How long the held settlement waits before it is recorded UNKNOWN (default 2000 ms). */
  readonly settleTimeoutMs?: number;
  /** Called once the local chain listens (the CLI says where, on stderr). */
  readonly onChain?: (chain: { url: string; port: number; pid: number }) => void;
}

type Check = { readonly ok: boolean; readonly detail: string };

export interface X402DemoReport {
  readonly sessionId: string;
  readonly chain: { readonly url: string; readonly token: string };
  readonly receiptRoot: string;
  readonly size: number;
  readonly steps: readonly DeskStep[];
  /** Payment turns by ruling: `admitted` or the refusal code. */
  readonly rulings: Readonly<Record<string, number>>;
  /** Tickets by final lifecycle state, and how many were ever recorded UNKNOWN. */
  readonly lifecycle: { readonly final: Readonly<Record<string, number>>; readonly everUnknown: number };
  readonly budget: BudgetFigures | undefined;
  readonly checks: { readonly bundle: Check; readonly receipt: Check; readonly evidence: readonly (Check & { readonly file: string })[] };
  readonly files: Readonly<Record<string, string>>;
}

const x402Of = (e: Entry): PaymentsRuling => ((e as { ruling?: { x402?: PaymentsRuling } }).ruling?.x402 ?? {});

/** Counts of a recorded payment day. */
export function paymentCounts(entries: readonly Entry[]): Pick<X402DemoReport, 'rulings' | 'lifecycle' | 'budget'> {
  const rulings: Record<string, number> = {};
  const states = new Map<number, string>();
  const unknown = new Set<number>();
  let budget: BudgetFigures | undefined;
  for (const e of entries) {
    const x = x402Of(e);
    if (x.payment) {
      const k = x.payment.admitted ? 'admitted' : x.payment.code;
      rulings[k] = (rulings[k] ?? 0) + 1;
      if (x.payment.admitted) states.set(x.payment.ticket, 'RESERVED');
    }
    for (const s of x.settlements ?? []) {
      if (!s.ok) continue;
      states.set(s.ticket, s.state);
      if (s.state === 'UNKNOWN') unknown.add(s.ticket);
    }
    if (x.budgets?.[0]) budget = x.budgets[0];
  }
  const final: Record<string, number> = {};
  for (const s of states.values()) final[s] = (final[s] ?? 0) + 1;
  return { rulings, lifecycle: { final, everUnknown: unknown.size }, budget };
}

/** Runs the x402 desk's day into `out`; the parts it starts are stopped before it returns or throws. */
export async function runX402Demo(o: X402DemoOptions): Promise<X402DemoReport> {
  const parts: { close(): Promise<void> }[] = [];
  let stopping: Promise<void> | undefined;
  const stopAll = () => (stopping ??= (async () => {
    for (const p of parts.reverse()) await p.close().catch(() => undefined);
  })());
  const onSignal = (signal: NodeJS.Signals) => {
    void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await mkdir(o.out, { recursive: true });
    const chain: LocalChain = await startChain();
    parts.push({ close: () => chain.stop() });
    o.onChain?.({ url: chain.url, port: chain.port, pid: chain.pid });
    const token = await deployToken(chain.url, [X402_DESK.agent.address], 1_000_000n);
    let held: Promise<void> | undefined;
    let release: (() => void) | undefined;
    const facilitator = await startFacilitator(chain.url, { beforeSettle: () => held ?? Promise.resolve() });
    parts.push({ close: async () => { release?.(); await facilitator.close(); } });
    const resource = async (amount: string, description: string): Promise<Listening> => {
      const l = await startResource(facilitator.url, { payTo: X402_DESK.vendor, token, amount, description });
      parts.push(l);
      return l;
    };
    const servers = {
      chainUrl: chain.url,
      token,
      quote: await resource(X402_PRICES.quote, 'Top-of-book quote'),
      tape: await resource(X402_PRICES.tape, 'The last hour of trades'),
      depth: await resource(X402_PRICES.depth, 'Full order-book depth'),
      hold: () => void (held = new Promise<void>((ok) => (release = ok))),
      release: () => { release?.(); held = undefined; },
    };

    const store = await openStore(join(o.out, 'tally.db'));
    parts.push({ close: () => store.close() });
    const engine = new Engine({ store, ruler: createPaymentsRuler({ store, inner: createRefereeRuler({ store }) }) });
    const opened = await engine.open(x402DeskSpec(token.address, Date.now()));
    if (!opened.ok) throw new TallyError('TALLY_DEMO_DIVERGED', `the x402 desk's session was refused: ${opened.diagnostic}`, { details: opened.message });
    const sessionId = opened.sessionId;
    const steps = await runDesk(engine, sessionId, servers, o.settleTimeoutMs);

    const key = demoEngineKey();
    const notary = createNotary({ key });
    const sealed = await notary.sealWithReceipt(engine, sessionId, { desk: 'x402' });
    if (!sealed.ok) throw new TallyError('TALLY_DEMO_DIVERGED', `the x402 day's seal was refused: ${sealed.diagnostic}`, { details: sealed.message });
    const files = {
      dir: o.out,
      db: join(o.out, 'tally.db'),
      bundle: join(o.out, 'bundle.jsonl'),
      receipt: join(o.out, 'receipt.json'),
      checkpoint: join(o.out, 'receipt.note'),
      verifierKey: join(o.out, 'engine.vkey'),
      summary: join(o.out, 'summary.json'),
    };
    const lines: Uint8Array[] = [];
    for await (const l of engine.exportEntries(sessionId)) lines.push(l);
    await writeFile(files.bundle, encodeBundle(lines));
    await writeFile(files.checkpoint, sealed.signedCheckpoint);
    await writeFile(files.verifierKey, `${key.verifierKey}\n`);
    await writeFile(files.receipt, `${JSON.stringify({ ...sealed.receipt, engine: DEMO_ENGINE_NAME, verifierKey: key.verifierKey }, null, 2)}\n`);
    const entries = (await readFile(files.bundle, 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Entry);
    const counts = paymentCounts(entries);

    // Evidence packs: the payment recorded UNKNOWN and reconciled, and the offer_drift refusal.
    const reconciled = entries.map(x402Of).find((x) => x.settlements?.some((s) => s.ok && s.state === 'UNKNOWN'))?.settlements?.find((s) => s.ok)?.ticket;
    const drift = entries.map(x402Of).find((x) => x.payment && !x.payment.admitted && x.payment.code === 'offer_drift')?.payment?.payment_hash;
    const wanted: [string, Parameters<typeof assemblePaymentEvidence>[2]][] = [];
    if (reconciled !== undefined) wanted.push([`payment-${reconciled}.json`, { ticket: reconciled }]);
    if (drift !== undefined) wanted.push(['payment-drift.json', { paymentHash: drift }]);
    const evidence: (Check & { file: string })[] = [];
    for (const [name, select] of wanted) {
      const file = join(o.out, name);
      const built = await assemblePaymentEvidence(entries, sessionId, select, async (index) => {
        const r = await notary.turnReceipt(engine, sessionId, index, { signedCheckpoint: sealed.signedCheckpoint });
        return r.ok ? { ok: true, text: r.text, signedCheckpoint: sealed.signedCheckpoint } : { ok: false, message: `${r.code}: ${r.message}` };
      });
      if (!built.ok) {
        evidence.push({ ok: false, detail: `${built.code}: ${built.message}`, file });
        continue;
      }
      await writeFile(file, `${canonicalJson(built.pack as unknown as CanonicalObject)}\n`);
      const v = await verifyPaymentEvidence(JSON.parse(await readFile(file, 'utf8')), { verifiers: [key.verifierKey] });
      evidence.push(v.ok ? { ok: true, detail: `${v.payment.admitted ? `ticket ${v.payment.ticket}, final state ${v.state}` : `refused ${v.payment.code}`}; reasons: ${v.reasons.length ? v.reasons.join(', ') : 'none'}`, file } : { ok: false, detail: `${v.code}: ${v.message}`, file });
    }

    // The bundle re-derived from itself with the payment referee, pinned to the seal; the signed receipt against the engine key.
    const pin = { sessionId, size: sealed.receipt.size, receiptRoot: sealed.receipt.receiptRoot };
    const replayed = await replayFile(files.bundle, { ruler: (s) => createPaymentsRuler({ store: s, inner: createRefereeRuler({ store: s }) }), pin });
    const bundle: Check = replayed.ok
      ? { ok: true, detail: `${replayed.size} entries chained and sealed, ${replayed.rulings} rulings re-derived byte for byte` }
      : replayed.stage === 'chain'
        ? { ok: false, detail: `entry ${replayed.index}: ${replayed.code}: ${replayed.message}` }
        : { ok: false, detail: `entry ${replayed.divergences[0]?.index}: ${replayed.divergences[0]?.kind}: ${replayed.divergences[0]?.message}` };
    const cp = openSessionCheckpoint(sealed.signedCheckpoint, [key.verifierKey], { sessionId });
    const receipt: Check = !cp.ok
      ? { ok: false, detail: `${cp.code}: ${cp.message}` }
      : cp.checkpoint.size === pin.size && cp.checkpoint.root === pin.receiptRoot
        ? { ok: true, detail: `signed by ${cp.checkpoint.signedBy.map((x) => x.name).join(', ')} over all ${cp.checkpoint.size} entries` }
        : { ok: false, detail: 'the signed checkpoint is not the sealed receipt' };

    const report: X402DemoReport = {
      sessionId,
      chain: { url: chain.url, token: token.address },
      receiptRoot: sealed.receipt.receiptRoot,
      size: sealed.receipt.size,
      steps,
      ...counts,
      checks: { bundle, receipt, evidence },
      files: { ...files, ...Object.fromEntries(evidence.map((e, i) => [`evidence${i}`, e.file])) },
    };
    await writeFile(files.summary, `${JSON.stringify(report, null, 2)}\n`);
    return report;
  } finally {
    await stopAll();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Whether every check of the report passed. */
export function x402DemoOk(r: X402DemoReport): boolean {
  return r.checks.bundle.ok && r.checks.receipt.ok && r.checks.evidence.length === 2 && r.checks.evidence.every((e) => e.ok);
}
