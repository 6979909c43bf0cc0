/**
 * Child process of the long-day benchmark: runs ONE step over the day in
 * `<dir>` (`node longday-child.js <step> <dir> <entries>`) and prints one JSON
 * line `{ step, ms, maxRssKb, detail, heapUsedMb, heapTotalMb, externalMb }` (the last three at
 * the end, for diagnosis), so the peak RSS is that of a
 * fresh process doing nothing but that step (read at the end, from Linux's
 * VmHWM of this process image).
 *
 * Steps, in order: `record` (a day of `entries` entries into SQLite, the seal
 * left out), `seal` (the notary seals it and signs the receipt checkpoint),
 * `export` (the bundle file), `verify` (the bundle against the signed
 * checkpoint), `replay` (every ruling re-derived), `prove-store` (the notary's
 * single-turn receipt from the store), `prove-bundle` (the `tally prove` path:
 * a receipt from the bundle file). Each later step reads only the files of
 * the earlier ones. `demo` runs `tally demo` whole in this one process (its
 * own store and files under `<dir>/demo`), every phase of a day of about as
 * many entries.
 */
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { privateKeyToAccount } from 'viem/accounts';
import { signIntent } from '../intent/index.js';
import { toHex } from '../protocol/hex.js';
import {
  bundleFileChunks,
  createNotary,
  formatPrivateKey,
  generateEngineKey,
  indexBundle,
  parsePrivateKey,
  peekSessionCheckpoint,
  replayFile,
  turnReceiptFromBundle,
  verifyBundleCheckpoint,
  verifyTurnReceipt,
} from '../receipt/index.js';
import { createRefereeRuler } from '../referee/index.js';
import { Engine } from '../session/index.js';
import { SqliteStore } from '../store/sqlite/store.js';
import { INTENT_EVERY, LONGDAY_STEPS, demoWakes, type LongdayStep } from './longday.js';
import { peakRssKb } from './rss.js';

const T0 = 1_893_456_000_000; // 2030-01-01
const FAR_TTL = '2100-01-01T00:00:00Z';
const enc = new TextEncoder();

function fail(message: string): never {
  throw new Error(`longday: ${message}`);
}

function files(dir: string) {
  return { db: join(dir, 'day.db'), bundle: join(dir, 'bundle.jsonl'), key: join(dir, 'engine.key'), note: join(dir, 'receipt.note'), session: join(dir, 'session.json') };
}

function openEngine(db: string): { engine: Engine; store: SqliteStore } {
  const store = new SqliteStore(db, { synchronous: 'NORMAL' });
  return { engine: new Engine({ store, ruler: createRefereeRuler({ store }) }), store };
}

function session(dir: string): { sessionId: string; size: number } {
  return JSON.parse(readFileSync(files(dir).session, 'utf8')) as { sessionId: string; size: number };
}

/** Records genesis + frame/turn pairs: `entries - 1` entries, so the seal makes `entries`. */
async function record(dir: string, entries: number): Promise<string> {
  const f = files(dir);
  const account = privateKeyToAccount(`0x${toHex(keccak_256(enc.encode('tally-bench-longday-agent')))}`);
  const { engine, store } = openEngine(f.db);
  try {
    const open = await engine.open({ name: 'bench longday', entries, agents: { 'agent-0': account.address } });
    if (!open.ok) fail(open.message);
    const sessionId = open.sessionId;
    const pairs = Math.max(0, Math.floor((entries - 2) / 2));
    let intents = 0;
    for (let i = 0; i < pairs; i++) {
      const ord = i - 1;
      const fr = await engine.frame({ sessionId, ordinal: ord, time: T0 + i * 1000 });
      if (!fr.ok) fail(fr.message);
      let bytes: Uint8Array;
      if (i % INTENT_EVERY === 0) {
        const intent = await signIntent({ action: 'open', agent_id: 'agent-0', nonce: `n-${i}`, ttl: FAR_TTL, size: `${1 + (i % 7)}.25`, market: 'BTC-PERP', side: 'long', leverage: '3', max_slippage: '0.005' }, account);
        bytes = enc.encode(JSON.stringify({ intent, context: 'longday' }));
        intents++;
      } else {
        bytes = enc.encode(`{"action":"hold","i":${i},"note":"unsigned long-day turn"}`);
      }
      const t = await engine.turn({ sessionId, ordinal: ord, parentHash: fr.entryHash, frameRoot: fr.frameRoot, body: { kind: 'authored', bytes } });
      if (!t.ok) fail(t.message);
    }
    writeFileSync(f.session, JSON.stringify({ sessionId, size: 1 + 2 * pairs }));
    writeFileSync(f.key, formatPrivateKey(generateEngineKey('bench-longday')) + '\n');
    return `${1 + 2 * pairs} entries, ${intents} signed intent${intents === 1 ? '' : 's'}`;
  } finally {
    await store.close();
  }
}

async function seal(dir: string): Promise<string> {
  const f = files(dir);
  const { sessionId } = session(dir);
  const { engine, store } = openEngine(f.db);
  try {
    const notary = createNotary({ key: engineKey(dir) });
    const r = await notary.sealWithReceipt(engine, sessionId);
    if (!r.ok) fail(r.message);
    writeFileSync(f.note, r.signedCheckpoint);
    return `${r.receipt.size} entries sealed, root ${r.receipt.receiptRoot.slice(0, 16)}…`;
  } finally {
    await store.close();
  }
}

async function exportBundle(dir: string): Promise<string> {
  const f = files(dir);
  const { sessionId } = session(dir);
  const { engine, store } = openEngine(f.db);
  try {
    const out = createWriteStream(f.bundle);
    let n = 0;
    for await (const line of engine.exportEntries(sessionId)) {
      n++;
      if (!out.write(line)) await once(out, 'drain');
      if (!out.write('\n')) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    return `${n} lines`;
  } finally {
    await store.close();
  }
}

/** The engine key the record step wrote. */
function engineKey(dir: string): ReturnType<typeof parsePrivateKey> {
  return parsePrivateKey(readFileSync(files(dir).key, 'utf8').trim());
}

function verifierKey(dir: string): string {
  return engineKey(dir).verifierKey;
}

async function verify(dir: string): Promise<string> {
  const f = files(dir);
  const r = await verifyBundleCheckpoint(bundleFileChunks(f.bundle), { signedCheckpoint: readFileSync(f.note, 'utf8'), verifiers: [verifierKey(dir)] });
  if (!r.ok) fail(`verify: ${r.code}: ${r.message}`);
  return 'bundle matches the signed checkpoint';
}

async function replayStep(dir: string): Promise<string> {
  const r = await replayFile(files(dir).bundle, { ruler: (store) => createRefereeRuler({ store }) });
  if (!r.ok) fail(`replay: ${r.stage === 'chain' ? `${r.code}: ${r.message}` : `${r.divergences.length} divergences, first at ${r.divergences[0]?.index}`}`);
  return `${r.rulings} rulings re-derived`;
}

/** The turn proved: the one in the middle of the day. */
function middleTurn(size: number): number {
  const mid = Math.floor(size / 2);
  return mid % 2 === 0 ? mid : mid + 1; // turns sit at even indexes (frames at odd ones)
}

async function proveStore(dir: string): Promise<string> {
  const f = files(dir);
  const { sessionId, size } = session(dir);
  const { engine, store } = openEngine(f.db);
  try {
    const note = readFileSync(f.note, 'utf8');
    const notary = createNotary({ key: engineKey(dir) });
    const index = middleTurn(size);
    const r = await notary.turnReceipt(engine, sessionId, index, { signedCheckpoint: note });
    if (!r.ok) fail(`prove: ${r.code}: ${r.message}`);
    const v = verifyTurnReceipt(r.text, { verifiers: [notary.verifierKey] });
    if (!v.ok) fail(`the receipt does not verify: ${v.code}`);
    return `entry ${index} of ${r.size} proved and verified`;
  } finally {
    await store.close();
  }
}

async function proveBundle(dir: string): Promise<string> {
  const f = files(dir);
  const { size } = session(dir);
  const index = middleTurn(size);
  const note = readFileSync(f.note, 'utf8');
  const peeked = peekSessionCheckpoint(note);
  if (!peeked) fail('the receipt note is not a session checkpoint');
  // What `tally prove` does: floor 8, the chunks of this entry and of the checkpoint's size kept.
  const ix = await indexBundle(bundleFileChunks(f.bundle), { entries: [index], sizes: [peeked.size], floor: 8, requireSealed: false });
  if (!ix.ok) fail(`prove: ${ix.code}: ${ix.message}`);
  const vkey = verifierKey(dir);
  const r = turnReceiptFromBundle(ix, index, note, { verifiers: [vkey] });
  if (!r.ok) fail(`prove: ${r.code}: ${r.message}`);
  const v = verifyTurnReceipt(r.text, { verifiers: [vkey] });
  if (!v.ok) fail(`the receipt does not verify: ${v.code}`);
  return `entry ${index} of ${r.size} proved and verified`;
}

async function demo(dir: string, entries: number): Promise<string> {
  // Loaded on use: the other steps do not load the demo.
  const { runDemo } = await import('../demo/run.js');
  const out = join(dir, 'demo');
  const r = await runDemo({ seed: 1, wakes: demoWakes(entries), out, db: join(out, 'demo.db') });
  const c = r.checks;
  const failed = Object.entries(c).filter(([, v]) => !v.ok).map(([k]) => k);
  if (failed.length > 0) fail(`demo: ${failed.join(', ')} failed`);
  return `${r.receipt.size} entries, ${r.wakes} wakes, every check ok`;
}

const STEPS: Record<LongdayStep, (dir: string, entries: number) => Promise<string>> = {
  record,
  seal,
  export: exportBundle,
  verify,
  replay: replayStep,
  'prove-store': proveStore,
  'prove-bundle': proveBundle,
  demo,
};

const [step, dir, n] = process.argv.slice(2);
if (step === undefined || dir === undefined || !(LONGDAY_STEPS as readonly string[]).includes(step)) {
  throw new Error(`usage: longday-child.js ${LONGDAY_STEPS.join('|')} <dir> <entries>`);
}
const entries = Number(n ?? 0);
const t0 = performance.now();
const detail = await STEPS[step as LongdayStep](dir, entries);
const ms = performance.now() - t0;
const mem = process.memoryUsage();
process.stdout.write(`${JSON.stringify({ step, ms, maxRssKb: peakRssKb(), detail, heapUsedMb: Math.round(mem.heapUsed / 1048576), heapTotalMb: Math.round(mem.heapTotal / 1048576), externalMb: Math.round(mem.external / 1048576) })}\n`);
