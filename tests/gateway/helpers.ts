import { resolve } from 'node:path';
import { replayInMemory } from '../../src/receipt/replay/replay.js';
import { replayRuler } from '../../src/referee/replay-ruler.js';
import { createRefereeRuler } from '../../src/referee/ruler.js';
import { Engine } from '../../src/session/index.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { TranscriptStore } from '../../src/store/types.js';
import { verifyChunks } from '../../src/protocol/index.js';
import { sha256 } from '../../src/codec/sha256.js';
import { ChildChannel, Gateway, Upstream } from '../../src/gateway/index.js';
import type { SessionSpec } from '../../src/protocol/index.js';
import type { Judge } from '../../src/referee/judge.js';
import { mandate, signSpecSync, unsignedSpec } from '../referee/fixtures.js';

export const ROOT = resolve(import.meta.dirname, '../..');
export const EVERYTHING = [process.execPath, resolve(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'];
export const FILESYSTEM = (dir: string) => [process.execPath, resolve(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'), dir];
export const HOSTILE = [process.execPath, resolve(import.meta.dirname, 'fixtures/hostile-server.mjs')];
export const COUNTING = [process.execPath, resolve(import.meta.dirname, 'fixtures/counting-server.mjs')];

let run = 0;
/** A gateway day's spec without a mandate (every offered tool admitted). */
export const openSpec = (): SessionSpec => ({ name: 'gateway-test', mcp: { run: `${process.pid}-${++run}-${Date.now()}` } });

/** A gateway day under a signed mandate whose tools section is `tools`, in force around the wall clock. */
export function mandateSpec(tools: Record<string, unknown>, over: Record<string, unknown> = {}): SessionSpec {
  const now = Date.now();
  const m = mandate({ starts_at: now - 60_000, expires_at: now + 3_600_000, tools, ...over });
  return signSpecSync({ ...unsignedSpec(`gateway-mandate-${process.pid}-${++run}`, m), mcp: { run: String(now) } });
}

export interface Day {
  readonly gateway: Gateway;
  readonly engine: Engine;
  readonly store: TranscriptStore;
  readonly upstream: Upstream;
  next(): number;
  call(name: string, args?: Record<string, unknown>, id?: string | number): Promise<Record<string, unknown>>;
}

/** Starts an in-process gateway over a real child upstream and a memory store. */
export async function startDay(command: readonly string[], spec: SessionSpec = openSpec(), opts: { timeoutMs?: number; maxResultBytes?: number; env?: NodeJS.ProcessEnv; judges?: readonly Judge[]; judgeTimeoutMs?: number } = {}): Promise<Day> {
  const store = new MemoryStore();
  const engine = new Engine({ store, ruler: createRefereeRuler({ store, ...(opts.judges === undefined ? {} : { panel: opts.judges }), ...(opts.judgeTimeoutMs === undefined ? {} : { judgeTimeoutMs: opts.judgeTimeoutMs }) }) });
  const max = opts.maxResultBytes ?? 262_144;
  const upstream = new Upstream(new ChildChannel(command[0]!, command.slice(1), max, opts.env ?? process.env), max);
  const gateway = new Gateway({ engine, upstream, spec, timeoutMs: opts.timeoutMs ?? 10_000 });
  await gateway.start();
  let id = 0;
  const next = () => ++id;
  return {
    gateway,
    engine,
    store,
    upstream,
    next,
    async call(name, args, given) {
      const r = await gateway.handle({ jsonrpc: '2.0', id: given ?? next(), method: 'tools/call', params: { name, ...(args === undefined ? {} : { arguments: args }) } });
      return r!;
    },
  };
}

/** The day's bundle (every entry's bytes and a newline). */
export async function bundleOf(store: TranscriptStore, sessionId: string): Promise<Uint8Array[]> {
  const rows = await store.readRange(sessionId, 0, 1_000_000);
  return rows.flatMap((r) => [r.bytes, new Uint8Array([0x0a])]);
}

/** Verifies and replays a sealed day with the ruler `tally replay` picks. */
export async function verifyAndReplay(store: TranscriptStore, sessionId: string) {
  const chunks = await bundleOf(store, sessionId);
  const v = await verifyChunks(sha256, chunks);
  const r = await replayInMemory(chunks, { ruler: replayRuler('auto', true).ruler });
  return { verified: v, replayed: r };
}

/** The `tool` rulings of a day's turns, in order (`undefined` for the closing turn). */
export async function toolRulings(store: TranscriptStore, sessionId: string): Promise<{ bytes: string; ruling: Record<string, unknown> | undefined }[]> {
  const rows = await store.readRange(sessionId, 0, 1_000_000);
  const out: { bytes: string; ruling: Record<string, unknown> | undefined }[] = [];
  for (const r of rows) {
    const e = JSON.parse(new TextDecoder().decode(r.bytes)) as { kind: string; body?: { bytes?: string }; ruling?: { tool?: Record<string, unknown> } };
    if (e.kind === 'turn') out.push({ bytes: Buffer.from(e.body!.bytes!, 'base64').toString('utf8'), ruling: e.ruling?.tool });
  }
  return out;
}

/** The data of every frame, in order. */
export async function frames(store: TranscriptStore, sessionId: string): Promise<Record<string, unknown>[]> {
  const rows = await store.readRange(sessionId, 0, 1_000_000);
  return rows.map((r) => JSON.parse(new TextDecoder().decode(r.bytes)) as { kind: string; data?: Record<string, unknown> }).filter((e) => e.kind === 'frame').map((e) => e.data ?? {});
}
