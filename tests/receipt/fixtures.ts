/** Shared fixtures for the receipt tests: an intent day, and a re-sealer for forged bundles. */
import { sha256 } from '../../src/codec/index.js';
import { encodeBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { Frontier, canonicalBytes, entryHash, parseEntry, rfc6962Hasher, toHex, type CanonicalObject, type Entry } from '../../src/protocol/index.js';
import type { Engine } from '../../src/session/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { Day, carry, enc, frameTime, iso, openIntent, signed, spec } from '../rules/fixtures.js';

export { enc };

/**
 * A sealed day with every kind of turn: admitted intents, a rejected one
 * (expired), a replayed nonce (same session), a plain authored turn and a
 * stand-down. Entries: genesis, then (frame, turn) × 6, then the seal = 14.
 */
export async function intentDay(opts: { engine?: Engine; name?: string; nonceBase?: number } = {}) {
  const engine = opts.engine ?? createEngine({ store: new MemoryStore() });
  const day = await Day.open(engine, spec(opts.name ?? 'receipt-day'));
  const n = opts.nonceBase ?? 1;
  const ttl = (ord: number) => iso(frameTime(ord) + 60_000);
  await day.answer(carry(await signed(openIntent({ nonce: n, ttl: ttl(-1) })), 'first'));
  await day.answer(carry(await signed(openIntent({ nonce: n + 1, ttl: iso(frameTime(0) - 1) }))));
  await day.answer(carry(await signed(openIntent({ nonce: n, ttl: ttl(1) }))));
  await day.answer(enc.encode('just thinking out loud'));
  await day.answer(carry(await signed(openIntent({ nonce: n + 2, ttl: ttl(3) }))));
  const ord = day.ordinal++;
  const f = await engine.frame({ sessionId: day.sid, ordinal: ord, time: frameTime(ord) });
  if (!f.ok) throw new Error(f.message);
  const t = await engine.turn({ sessionId: day.sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
  if (!t.ok) throw new Error(t.message);
  return { engine, sid: day.sid, day };
}

/** Every entry's bytes, in order. */
export async function linesOf(engine: Engine, sid: string): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) out.push(l);
  return out;
}

/** Parses bundle lines into entries. */
export function entriesOf(lines: readonly Uint8Array[]): Entry[] {
  return lines.map((l) => {
    const r = parseEntry(JSON.parse(new TextDecoder().decode(l)));
    if (!r.ok) throw new Error(r.reason);
    return r.entry;
  });
}

const hasher = rfc6962Hasher(sha256);

/**
 * A forger's re-seal: re-encodes `entries` canonically and recomputes every
 * parent link, session id and the seal (size and root), so the result passes
 * `verifyBundle` whatever was edited. Returns the bundle bytes and its lines.
 */
export function reseal(entries: readonly Entry[]): { bundle: Uint8Array; lines: Uint8Array[] } {
  const lines: Uint8Array[] = [];
  const frontier = new Frontier(hasher);
  let sid = '';
  let prev = '';
  for (const original of entries) {
    let e: Record<string, unknown> = { ...original };
    if (e['kind'] !== 'genesis') e = { ...e, session: sid, parent: prev };
    if (e['kind'] === 'finalize') e = { ...e, size: lines.length, root: toHex(frontier.root()) };
    const bytes = canonicalBytes(e as CanonicalObject);
    const h = entryHash(sha256, bytes);
    if (e['kind'] === 'genesis') sid = toHex(h);
    prev = toHex(h);
    frontier.append(h);
    lines.push(bytes);
  }
  return { bundle: encodeBundle(lines), lines };
}
