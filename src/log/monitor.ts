/**
 * A monitor of the engine log (docs/PROTOCOL.md §15.7): it reads only the
 * C2SP tlog-tiles read API (`checkpoint`, `tile/entries/…`), holds every
 * leaf it read, and each round checks that the log's latest checkpoint
 * (signed by the pinned log key, named as its origin) is the tree of those
 * leaves and extends the checkpoint it held before — a smaller size, another
 * root at a held size, or served leaves that do not hash to a signed root
 * is a fork. It lists what the new leaves say (sessions opened, session
 * checkpoints signed, seals) and names both leaves when two checkpoint
 * leaves give one (origin, size) two roots: the engine key equivocated.
 * Bounded rounds; an unreachable log is reported and retried, never taken
 * as evidence. With a session source (§15.10) it also reads each session's
 * own entries (its bundle, or its served entries) and checks every
 * session checkpoint leaf's root against that session's tree.
 */
import { CheckpointLedger, MerkleLevels, checkpointAgainstTree, parseEngineLogLeaf, toHex, type CheckpointConflict, type EngineLogLeaf } from '../protocol/index.js';
import { entryLeafHash } from '../receipt/bytes.js';
import type { NoteVerifier } from '../receipt/note/types.js';
import { receiptHasher } from '../receipt/session/trees.js';
import { LogReader, openLogCheckpoint, type HeldLogCheckpoint } from './reader.js';
import type { LogSource } from './source.js';

export type { LogSource } from './source.js';
export type { HeldLogCheckpoint } from './reader.js';

/** What a new leaf says. */
export interface LogEvent {
  readonly index: number;
  readonly leaf: EngineLogLeaf;
}

/** One round of {@link monitorEngineLog}. */
export type LogMonitorRound =
  | { readonly kind: 'consistent'; readonly round: number; readonly from: number; readonly size: number; readonly root: string; readonly events: readonly LogEvent[]; readonly checked?: number }
  | { readonly kind: 'unavailable'; readonly round: number; readonly message: string };

/**
 * A session's own entries (canonical JSON lines, without the newline) from
 * `from` up to (not including) `to`, read from its bundle or its server; a
 * shorter answer is the end of what is there. Unavailable is reported,
 * never evidence.
 */
export type SessionEntriesSource = (sessionId: string, from: number, to: number) => Promise<{ readonly ok: true; readonly entries: readonly Uint8Array[] } | { readonly ok: false; readonly message: string }>;

/** Why the monitor stopped with a failure. */
export type LogMonitorFailure =
  /** The log served a view that cannot extend the one held: both signed checkpoints are the evidence. */
  | { readonly ok: false; readonly kind: 'fork'; readonly code: 'smaller-size' | 'other-root' | 'leaves-not-root'; readonly message: string; readonly held: string; readonly served: string }
  /** Two checkpoint leaves that cannot be one session's history (one (origin, size) two roots: TALLY_LOG_EQUIVOCATION; signed past the seal: TALLY_LOG_INCONSISTENT). */
  | { readonly ok: false; readonly kind: 'equivocation'; readonly code: CheckpointConflict['code']; readonly message: string; readonly leaves: readonly [LogEvent, LogEvent]; readonly roots: readonly string[] }
  /** A checkpoint leaf whose root is not the root of the session's own tree at its size (TALLY_LOG_SESSION_MISMATCH). */
  | { readonly ok: false; readonly kind: 'session-mismatch'; readonly code: 'TALLY_LOG_SESSION_MISMATCH'; readonly message: string; readonly leaf: LogEvent; readonly roots: readonly string[] }
  /** A checkpoint not signed by the log key, not named as its origin, or bytes that are not the log's. */
  | { readonly ok: false; readonly kind: 'bad-log'; readonly message: string };

/** Outcome of {@link monitorEngineLog}. */
export type LogMonitorResult =
  | {
      readonly ok: true;
      readonly rounds: number;
      readonly latest: HeldLogCheckpoint | undefined;
      readonly opened: readonly string[];
      readonly unsealed: readonly string[];
      /** With a session source: checkpoint leaves checked against their session's tree, and those whose entries could not be read. */
      readonly sessions?: { readonly checked: number; readonly unchecked: readonly { readonly index: number; readonly message: string }[] };
    }
  | LogMonitorFailure;

/** Options of {@link monitorEngineLog}. */
export interface LogMonitorOptions {
  readonly source: LogSource;
  /** The log's verifier key(s); the checkpoint must be signed by one named as its origin. */
  readonly logVerifiers: readonly (NoteVerifier | string)[];
  readonly rounds: number;
  /** Pause between rounds (default 0). */
  readonly intervalMs?: number;
  /** A log checkpoint already held (another view, one a grader was given): the log must extend it. */
  readonly seed?: string;
  /** Each session's own entries: every checkpoint leaf is checked against its session's tree. */
  readonly sessions?: SessionEntriesSource;
  /** Most entries read of one session (default 2^20): a leaf of a larger size is listed unchecked. */
  readonly maxSessionEntries?: number;
  readonly onRound?: (r: LogMonitorRound) => void;
}

/** Each session's tree as read from its own entries (bounded), for {@link checkpointAgainstTree}. */
class SessionTrees {
  private readonly trees = new Map<string, { tree: MerkleLevels; end: boolean }>();
  constructor(
    private readonly source: SessionEntriesSource,
    private readonly max: number,
  ) {}

  /** The root function of the session's tree, read up to `size` entries; or why it cannot be read. */
  async rootsUpTo(sessionId: string, size: number): Promise<{ ok: true; rootAt: (n: number) => string | undefined } | { ok: false; message: string }> {
    if (size > this.max) return { ok: false, message: `size ${size} is above --max-session-entries ${this.max}` };
    let t = this.trees.get(sessionId);
    if (!t) this.trees.set(sessionId, (t = { tree: new MerkleLevels(receiptHasher), end: false }));
    const s = t;
    while (s.tree.size < size && !s.end) {
      const got = await this.source(sessionId, s.tree.size, size);
      if (!got.ok) return { ok: false, message: got.message };
      if (got.entries.length === 0) s.end = true;
      for (const e of got.entries.slice(0, size - s.tree.size)) s.tree.append(entryLeafHash(e));
    }
    // A session whose own entries end below the size: its tree of that size is not there to check.
    return { ok: true, rootAt: (n) => (n <= s.tree.size ? toHex(s.tree.root(n)) : undefined) };
  }
}

/**
 * Follows the engine log for `rounds` rounds (see the module comment).
 *
 * @example
 * const r = await monitorEngineLog({ source: logSource('https://tally.example/log'), logVerifiers: [logVkey], rounds: 10, intervalMs: 5000 });
 * if (!r.ok) alarm(r.kind, r.message);
 */
export async function monitorEngineLog(options: LogMonitorOptions): Promise<LogMonitorResult> {
  const reader = new LogReader(options.source);
  const ledger = new CheckpointLedger();
  const sessions = options.sessions === undefined ? undefined : new SessionTrees(options.sessions, options.maxSessionEntries ?? 1 << 20);
  let checked = 0;
  const unchecked: { index: number; message: string }[] = [];
  const opened: string[] = [];
  const sealed = new Set<string>();
  let held: HeldLogCheckpoint | undefined;
  if (options.seed !== undefined) {
    const s = openLogCheckpoint(options.seed, options.logVerifiers);
    if (!s.ok) return { ok: false, kind: 'bad-log', message: `the seed checkpoint: ${s.message}` };
    held = s.cp;
  }
  for (let round = 1; round <= options.rounds; round++) {
    if (round > 1 && (options.intervalMs ?? 0) > 0) await new Promise((r) => setTimeout(r, options.intervalMs));
    const got = await options.source('checkpoint');
    if (!got.ok) {
      options.onRound?.({ kind: 'unavailable', round, message: got.message });
      continue;
    }
    const o = openLogCheckpoint(new TextDecoder().decode(got.body), options.logVerifiers);
    if (!o.ok) return { ok: false, kind: 'bad-log', message: `the served checkpoint is ${o.message}` };
    const cp = o.cp;
    const fork = (code: 'smaller-size' | 'other-root' | 'leaves-not-root', message: string): LogMonitorFailure => ({ ok: false, kind: 'fork', code, message, held: held?.signedCheckpoint ?? '', served: cp.signedCheckpoint });
    if (held && cp.size < held.size) return fork('smaller-size', `the log served size ${cp.size}, below the ${held.size} it signed before`);
    if (held && cp.size === held.size && cp.root !== held.root) return fork('other-root', `the log signed size ${cp.size} with two roots: ${held.root} and ${cp.root}`);
    const from = reader.leaves.length;
    const read = await reader.readTo(cp.size);
    if (!read.ok) {
      if (read.kind === 'bad-log') return { ok: false, kind: 'bad-log', message: read.message };
      options.onRound?.({ kind: 'unavailable', round, message: read.message });
      continue;
    }
    if (held && reader.root(held.size) !== held.root) return fork('leaves-not-root', `the leaves served do not hash to the root ${held.root} of the held size ${held.size}`);
    if (reader.root(cp.size) !== cp.root) return fork('leaves-not-root', `the leaves served do not hash to the signed root ${cp.root} of size ${cp.size}`);
    const events: LogEvent[] = [];
    const before = checked;
    for (let i = from; i < cp.size; i++) {
      const p = parseEngineLogLeaf(reader.leaves[i]!);
      if (!p.ok) return { ok: false, kind: 'bad-log', message: `leaf ${i} is not an engine-log leaf: ${p.code}: ${p.message}` };
      const e: LogEvent = { index: i, leaf: p.leaf };
      const leaf = p.leaf;
      if (leaf.kind === 'open') opened.push(leaf.session);
      else {
        const c = { index: i, leaf };
        const conflict = ledger.add(c);
        if (conflict) {
          const first = conflict.leaves[0]!;
          const other: LogEvent = first === i ? e : { index: first, leaf: parseLeafAt(reader, first) };
          return { ok: false, kind: 'equivocation', code: conflict.code, message: conflict.message, leaves: [other, e], roots: conflict.roots };
        }
        const sessionId = leaf.origin.slice(leaf.origin.lastIndexOf('/') + 1);
        if (leaf.seal) sealed.add(sessionId);
        if (sessions) {
          const t = await sessions.rootsUpTo(sessionId, leaf.size);
          const mismatch = t.ok ? checkpointAgainstTree(c, t.rootAt) : undefined;
          if (mismatch) return { ok: false, kind: 'session-mismatch', code: 'TALLY_LOG_SESSION_MISMATCH', message: mismatch.message, leaf: e, roots: mismatch.roots };
          if (t.ok && t.rootAt(leaf.size) !== undefined) checked++;
          else unchecked.push({ index: i, message: t.ok ? `the session's own entries end below size ${leaf.size}` : t.message });
        }
      }
      events.push(e);
    }
    options.onRound?.({ kind: 'consistent', round, from, size: cp.size, root: cp.root, events, ...(sessions ? { checked: checked - before } : {}) });
    held = cp;
  }
  return { ok: true, rounds: options.rounds, latest: held, opened, unsealed: opened.filter((s) => !sealed.has(s)), ...(sessions ? { sessions: { checked, unchecked } } : {}) };
}

/** The leaf at `index` of the log read (one the ledger held: it parsed before). */
function parseLeafAt(reader: LogReader, index: number): EngineLogLeaf {
  const p = parseEngineLogLeaf(reader.leaves[index]!);
  if (!p.ok) throw new Error(`leaf ${index} parsed before and not now`);
  return p.leaf;
}
