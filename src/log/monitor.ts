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
 * as evidence.
 */
import { MerkleLevels, parseEngineLogLeaf, parseEntryBundle, tilePath, toHex, TILE_WIDTH, type EngineLogLeaf } from '../protocol/index.js';
import { entryLeafHash } from '../receipt/bytes.js';
import { parseCheckpoint } from '../receipt/checkpoint/checkpoint.js';
import { openNote } from '../receipt/note/open.js';
import type { NoteVerifier } from '../receipt/note/types.js';
import { receiptHasher } from '../receipt/session/trees.js';

/** Where the monitor reads the log: a path below the prefix (`checkpoint`, `tile/entries/000.p/5`) → its bytes. */
export type LogSource = (path: string) => Promise<{ readonly ok: true; readonly body: Uint8Array } | { readonly ok: false; readonly message: string }>;

/** A signed log checkpoint the monitor accepted. */
export interface HeldLogCheckpoint {
  readonly size: number;
  /** Root, 64 lowercase hex. */
  readonly root: string;
  readonly signedCheckpoint: string;
}

/** What a new leaf says. */
export interface LogEvent {
  readonly index: number;
  readonly leaf: EngineLogLeaf;
}

/** One round of {@link monitorEngineLog}. */
export type LogMonitorRound =
  | { readonly kind: 'consistent'; readonly round: number; readonly from: number; readonly size: number; readonly root: string; readonly events: readonly LogEvent[] }
  | { readonly kind: 'unavailable'; readonly round: number; readonly message: string };

/** Why the monitor stopped with a failure. */
export type LogMonitorFailure =
  /** The log served a view that cannot extend the one held: both signed checkpoints are the evidence. */
  | { readonly ok: false; readonly kind: 'fork'; readonly code: 'smaller-size' | 'other-root' | 'leaves-not-root'; readonly message: string; readonly held: string; readonly served: string }
  /** Two checkpoint leaves give one session checkpoint (origin, size) two roots. */
  | { readonly ok: false; readonly kind: 'equivocation'; readonly message: string; readonly leaves: readonly [LogEvent, LogEvent] }
  /** A checkpoint not signed by the log key, not named as its origin, or bytes that are not the log's. */
  | { readonly ok: false; readonly kind: 'bad-log'; readonly message: string };

/** Outcome of {@link monitorEngineLog}. */
export type LogMonitorResult = { readonly ok: true; readonly rounds: number; readonly latest: HeldLogCheckpoint | undefined; readonly opened: readonly string[]; readonly unsealed: readonly string[] } | LogMonitorFailure;

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
  readonly onRound?: (r: LogMonitorRound) => void;
}

type Opened = { ok: true; cp: HeldLogCheckpoint } | { ok: false; message: string };

function openLogCheckpoint(text: string, verifiers: readonly (NoteVerifier | string)[]): Opened {
  const o = openNote(text, verifiers);
  if (!o.ok) return { ok: false, message: `not signed by the log key: ${o.code}: ${o.message}` };
  const c = parseCheckpoint(o.text);
  if (!c.ok) return { ok: false, message: `not a tlog-checkpoint: ${c.code}: ${c.message}` };
  if (!o.verified.some((s) => s.name === c.checkpoint.origin)) return { ok: false, message: `the origin ${JSON.stringify(c.checkpoint.origin)} is not the name of the log key that signed it` };
  return { ok: true, cp: { size: c.checkpoint.size, root: toHex(c.checkpoint.root), signedCheckpoint: text } };
}

/**
 * Follows the engine log for `rounds` rounds (see the module comment).
 *
 * @example
 * const r = await monitorEngineLog({ source: httpSource('https://tally.example/log'), logVerifiers: [logVkey], rounds: 10, intervalMs: 5000 });
 * if (!r.ok) alarm(r.kind, r.message);
 */
export async function monitorEngineLog(options: LogMonitorOptions): Promise<LogMonitorResult> {
  const tree = new MerkleLevels(receiptHasher);
  const leaves: Uint8Array[] = [];
  /** (origin, size) → the first checkpoint leaf that named it. */
  const signed = new Map<string, LogEvent>();
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
    // Read the leaves not held yet, bundle by bundle, as the spec's paths give them at this size.
    const from = leaves.length;
    while (leaves.length < cp.size) {
      const index = Math.floor(leaves.length / TILE_WIDTH);
      const width = Math.min(TILE_WIDTH, cp.size - index * TILE_WIDTH);
      const path = tilePath({ kind: 'entries', index, width });
      const b = await options.source(path);
      if (!b.ok) break;
      const entries = parseEntryBundle(b.body);
      if (entries === undefined || entries.length !== width) return { ok: false, kind: 'bad-log', message: `${path} is not an entry bundle of ${width} entries` };
      for (let i = leaves.length - index * TILE_WIDTH; i < width; i++) {
        tree.append(entryLeafHash(entries[i]!));
        leaves.push(entries[i]!);
      }
    }
    if (leaves.length < cp.size) {
      options.onRound?.({ kind: 'unavailable', round, message: `could not read the entries up to ${cp.size} (have ${leaves.length})` });
      continue;
    }
    if (held && toHex(tree.root(held.size)) !== held.root) return fork('leaves-not-root', `the leaves served do not hash to the root ${held.root} of the held size ${held.size}`);
    if (toHex(tree.root(cp.size)) !== cp.root) return fork('leaves-not-root', `the leaves served do not hash to the signed root ${cp.root} of size ${cp.size}`);
    const events: LogEvent[] = [];
    for (let i = from; i < cp.size; i++) {
      const p = parseEngineLogLeaf(leaves[i]!);
      if (!p.ok) return { ok: false, kind: 'bad-log', message: `leaf ${i} is not an engine-log leaf: ${p.code}: ${p.message}` };
      const e: LogEvent = { index: i, leaf: p.leaf };
      if (p.leaf.kind === 'open') opened.push(p.leaf.session);
      else {
        const k = `${p.leaf.origin}\n${p.leaf.size}`;
        const first = signed.get(k);
        if (first && first.leaf.kind === 'checkpoint' && first.leaf.root !== p.leaf.root) {
          return { ok: false, kind: 'equivocation', message: `leaves ${first.index} and ${i} give ${p.leaf.origin} size ${p.leaf.size} two roots: ${first.leaf.root} and ${p.leaf.root}`, leaves: [first, e] };
        }
        if (!first) signed.set(k, e);
        if (p.leaf.seal) sealed.add(p.leaf.origin.slice(p.leaf.origin.lastIndexOf('/') + 1));
      }
      events.push(e);
    }
    options.onRound?.({ kind: 'consistent', round, from, size: cp.size, root: cp.root, events });
    held = cp;
  }
  return { ok: true, rounds: options.rounds, latest: held, opened, unsealed: opened.filter((s) => !sealed.has(s)) };
}
