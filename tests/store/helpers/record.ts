/**
 * Real entries for store tests: the engine runs on a MemoryStore wrapped so
 * that every `createSession` and `append` it issues is recorded. Replaying the
 * recorded requests against another store reproduces exactly what the engine
 * would send it; nothing here is hand-written bytes.
 */
import { createEngine, type Engine } from '../../../src/session/index.js';
import { MemoryStore } from '../../../src/store/index.js';
import type {
  AppendOutcome,
  AppendRequest,
  ExpectedLatest,
  NonceOwner,
  RecordCheckpointOutcome,
  SessionHead,
  SignedCheckpointRecord,
  StoredEntry,
  TranscriptStore,
} from '../../../src/store/index.js';

/** A session as the engine created it, then every append it made, in order. */
export interface RecordedChain {
  readonly sessionId: string;
  readonly genesis: StoredEntry;
  readonly head0: SessionHead;
  readonly appends: AppendRequest[];
}

/** Wraps a real store and records the successful writes. */
export class RecordingStore implements TranscriptStore {
  readonly name = 'recording';
  readonly chains = new Map<string, RecordedChain>();
  constructor(readonly inner: TranscriptStore = new MemoryStore()) {}
  async createSession(genesis: StoredEntry, head: SessionHead): Promise<'created' | 'exists'> {
    const r = await this.inner.createSession(genesis, head);
    if (r === 'created') this.chains.set(head.sessionId, { sessionId: head.sessionId, genesis, head0: head, appends: [] });
    return r;
  }
  async append(request: AppendRequest): Promise<AppendOutcome> {
    const r = await this.inner.append(request);
    if (r.ok) this.chains.get(request.sessionId)!.appends.push(request);
    return r;
  }
  loadHead(id: string): Promise<SessionHead | undefined> {
    return this.inner.loadHead(id);
  }
  readRange(id: string, from: number, to: number): Promise<StoredEntry[]> {
    return this.inner.readRange(id, from, to);
  }
  readSlot(id: string, kind: 'frame' | 'turn', ordinal: number): Promise<StoredEntry | undefined> {
    return this.inner.readSlot(id, kind, ordinal);
  }
  nonceOwner(agentId: string, nonce: string): Promise<NonceOwner | undefined> {
    return this.inner.nonceOwner(agentId, nonce);
  }
  listSessions(): Promise<string[]> {
    return this.inner.listSessions();
  }
  recordCheckpoint(record: SignedCheckpointRecord, expected: ExpectedLatest): Promise<RecordCheckpointOutcome> {
    return this.inner.recordCheckpoint(record, expected);
  }
  latestCheckpoint(origin: string): Promise<SignedCheckpointRecord | undefined> {
    return this.inner.latestCheckpoint(origin);
  }
  signedCheckpoints(origin: string): Promise<SignedCheckpointRecord[]> {
    return this.inner.signedCheckpoints(origin);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

const enc = new TextEncoder();

/** Drives a deterministic day of `wakes` wakes (frame + turn each) on `engine`; finalizes when asked. */
export async function driveDay(engine: Engine, name: string, wakes: number, finalize: boolean): Promise<string> {
  const open = await engine.open({ name, day: '2026-11-30' });
  if (!open.ok) throw new Error(open.message);
  const sid = open.sessionId;
  for (let ord = -1; ord < wakes; ord++) {
    const f = await engine.frame({ sessionId: sid, ordinal: ord, time: 1_000 + (ord + 1) * 60_000, data: { price: String(100 + ord) } });
    if (!f.ok) throw new Error(f.message);
    const body = ord % 3 === 2 ? ({ kind: 'stand-down', failureClass: 'timeout' } as const) : ({ kind: 'authored', bytes: enc.encode(`${name} answer ${ord}`) } as const);
    const t = await engine.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body });
    if (!t.ok) throw new Error(t.message);
  }
  if (finalize) {
    const fin = await engine.finalize(sid, { note: name });
    if (!fin.ok) throw new Error(fin.message);
  }
  return sid;
}

/** Records one session per element of `wakes`, each a day of that many wakes (a finalized chain ends sealed). */
export async function recordChains(prefix: string, wakes: readonly number[], finalize: boolean): Promise<RecordedChain[]> {
  const rec = new RecordingStore();
  const engine = createEngine({ store: rec });
  const out: RecordedChain[] = [];
  for (let i = 0; i < wakes.length; i++) {
    const sid = await driveDay(engine, `${prefix}-${i}`, wakes[i]!, finalize);
    out.push(rec.chains.get(sid)!);
  }
  return out;
}

/** The head after `size` entries of a recorded chain. */
export function headAt(chain: RecordedChain, size: number): SessionHead {
  return size === 1 ? chain.head0 : chain.appends[size - 2]!.next;
}

/** Every entry of a recorded chain, genesis first. */
export function entriesOf(chain: RecordedChain): StoredEntry[] {
  return [chain.genesis, ...chain.appends.map((a) => a.entry)];
}
