import { sha256 } from '../../codec/sha256.js';
import { TallyError, canonicalJson, fromBase64, parseEntry, verifyChunks, type CanonicalObject, type Entry, type VerifiedEntry } from '../../protocol/index.js';
import { createIntentRuler } from '../../rules/intent.js';
import { Engine, type Rejection, type RuleContext, type TurnRuler } from '../../session/index.js';
import { MemoryStore } from '../../store/memory.js';
import type { NonceOwner, TranscriptStore } from '../../store/types.js';
import type { BundleChunks } from '../proof/bundle.js';
import { fieldChanges } from './diff.js';
import type { ExternalFact, ReplayDivergence, ReplayOptions, ReplayResult } from './types.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The external fact in an intent ruling: `{"intent": {"admitted": false,
 * "code": "replayed_nonce", "first": {session, index, intent_hash}}}` whose
 * `first.session` is not `sessionId` — or is, at `index`, the very entry
 * being replayed: a reservation made ahead of a judge call by an attempt at
 * this slot that was never recorded (the store failed, the engine stopped),
 * which no transcript holds. Other same-session owners are re-derived.
 */
export function intentExternalNonceFact(recorded: CanonicalObject, sessionId: string, at?: number): NonceOwner | undefined {
  const intent = recorded['intent'];
  if (!isObject(intent) || intent['admitted'] !== false || intent['code'] !== 'replayed_nonce') return undefined;
  const first = intent['first'];
  if (!isObject(first)) return undefined;
  const { session, index, intent_hash: intentHash } = first;
  if (typeof session !== 'string' || typeof intentHash !== 'string' || typeof index !== 'number' || !Number.isSafeInteger(index)) return undefined;
  if (session === sessionId && index !== at) return undefined;
  return { intentHash, sessionId: session, index };
}

/**
 * Wraps the ruler so that a nonce the replay store does not know is answered
 * from the recorded ruling's external fact — once seen, for the rest of the
 * replay — and every such answer is listed. The store's own reservations
 * (re-derived from this session) always win. Every other member of the ruler
 * (`checkSpec`, a referee's `ruleStandDown` and `history`, …) passes through;
 * any `rule*` method gets the wrapped context.
 */
function withExternalFacts(
  inner: TurnRuler,
  extract: NonNullable<ReplayOptions['externalNonceFact']>,
  facts: ExternalFact[],
  current: { index: number },
): TurnRuler {
  const seeded = new Map<string, NonceOwner>();
  const wrapContext = (ctx: RuleContext): RuleContext => {
    const recordedFact = ctx.recorded === undefined ? undefined : extract(ctx.recorded, ctx.sessionId, current.index);
    const keyed = ctx.recorded === undefined ? [] : (inner.recordedReservations?.(ctx.recorded, ctx.sessionId) ?? []);
    return {
      ...ctx,
      nonceOwner: async (agentId: string, nonce: string) => {
        const own = await ctx.nonceOwner(agentId, nonce);
        if (own) return own;
        const key = JSON.stringify([agentId, nonce]);
        const known = seeded.get(key);
        if (known) return known;
        // A reservation the recorded ruling names for exactly this key (e.g. a judge-rate slot).
        const named = keyed.find((r) => r.agentId === agentId && r.nonce === nonce);
        if (named) {
          seeded.set(key, named.owner);
          facts.push({ index: current.index, kind: named.kind, agentId, nonce, owner: named.owner });
          return named.owner;
        }
        if (!recordedFact) return undefined;
        seeded.set(key, recordedFact);
        facts.push({ index: current.index, kind: 'nonce-owner', agentId, nonce, owner: recordedFact });
        return recordedFact;
      },
    };
  };
  return new Proxy(inner, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (typeof prop === 'string' && prop.startsWith('rule')) {
        return (ctx: RuleContext, ...rest: unknown[]) => fn.call(target, isObject(ctx) && typeof ctx.nonceOwner === 'function' ? wrapContext(ctx) : ctx, ...rest);
      }
      return fn.bind(target);
    },
  });
}

function rulerFor(option: ReplayOptions['ruler'], store: TranscriptStore): TurnRuler | undefined {
  if (option === null) return undefined;
  if (option === undefined) return createIntentRuler();
  return typeof option === 'function' ? option(store) : option;
}

/** `e` without the members `keys` (the links a divergence changes). */
function stripped(e: Entry, keys: readonly string[]): CanonicalObject {
  const copy: Record<string, unknown> = { ...e };
  for (const k of keys) delete copy[k];
  return copy as CanonicalObject;
}

function without(e: Entry, keys: readonly string[]): string {
  return canonicalJson(stripped(e, keys));
}

/**
 * Re-derives every ruling of a sealed transcript from the transcript alone.
 *
 * The chain is verified first (PROTOCOL.md §5, streaming, optional pin);
 * meanwhile a FRESH engine over an empty store (`store`), with the same ruler, is
 * driven with the recorded inputs: `open(genesis.spec)`, each frame's
 * `{ordinal, time, data}`, each turn's body (with the recorded ruling handed
 * to the ruler as `context.recorded`, for evidence from outside parties),
 * and the seal's artifacts. Each entry the engine writes is compared with the
 * recorded one at the same index; a difference is a {@link ReplayDivergence}
 * naming the entry. After a divergence the chains' links differ, so later
 * entries are compared without `parent` (and the seal without `root`) and
 * only real differences are reported. A recorded ruling edited with every
 * hash and the seal recomputed therefore passes `verifyBundle` but fails here.
 *
 * What cannot be re-derived offline — a nonce first used in another session,
 * or a reservation the ruler's `recordedReservations` names (a judge-rate
 * slot) — is taken from the recorded ruling and listed in `externalFacts`
 * (trusted, not verified). A chain failure wins over divergences (`stage: 'chain'`).
 *
 * This is the browser-safe core: the caller gives the empty store the replay
 * writes into. Node callers use `replay` (./replay-disk.ts), which picks a
 * scratch store on disk so memory stays bounded on long days.
 *
 * @example
 * const r = await replayInto(new MemoryStore(), [bundleBytes]);
 * if (!r.ok && r.stage === 'replay') console.error(r.divergences[0]?.index, r.divergences[0]?.kind);
 */
export async function replayInto(store: TranscriptStore, chunks: BundleChunks, options: ReplayOptions = {}): Promise<ReplayResult> {
  const facts: ExternalFact[] = [];
  const divergences: ReplayDivergence[] = [];
  const max = Math.max(1, options.maxDivergences ?? 100);
  const current = { index: 0 };
  const base = rulerFor(options.ruler, store);
  const ruler = base === undefined ? undefined : withExternalFacts(base, options.externalNonceFact ?? intentExternalNonceFact, facts, current);
  const engine = new Engine(ruler === undefined ? { store } : { store, ruler });

  let sessionId = '';
  let frame: { entryHash: string; frameRoot: string } | undefined;
  let diverged = false;
  let stoppedAt: number | undefined;
  let turns = 0;
  let rulings = 0;

  const stop = (index: number) => {
    stoppedAt = index;
  };
  const rejected = (v: VerifiedEntry, r: Rejection) => {
    divergences.push({ index: v.index, kind: 'rejected', message: `the engine refused the recorded ${v.entry.kind}: ${r.diagnostic}: ${r.message}`, recorded: v.entry, expected: v.entry, actual: { diagnostic: r.diagnostic, message: r.message } });
    stop(v.index);
  };

  const compare = async (v: VerifiedEntry, actualHash: string) => {
    if (actualHash === v.hash) {
      if (v.entry.kind === 'turn' && v.entry.ruling !== undefined) rulings++;
      return;
    }
    const rows = await engine.store.readRange(sessionId, v.index, v.index + 1);
    const parsed = rows[0] ? parseEntry(JSON.parse(new TextDecoder().decode(rows[0].bytes))) : undefined;
    if (!parsed?.ok) throw new TallyError('TALLY_REPLAY_INTERNAL', 'The replay engine wrote no readable entry.', { details: `entry ${v.index}` });
    const expected = v.entry;
    const actual = parsed.entry;
    const links = expected.kind === 'finalize' && diverged ? ['parent', 'root'] : ['parent'];
    diverged = true;
    if (without(expected, links) === without(actual, links)) {
      if (expected.kind === 'turn' && expected.ruling !== undefined) rulings++;
      return;
    }
    if (expected.kind === 'turn' && actual.kind === 'turn' && without(expected, [...links, 'ruling']) === without(actual, [...links, 'ruling'])) {
      divergences.push({
        index: v.index,
        kind: 'ruling-diverged',
        message: `turn ${expected.ordinal}: the recorded ruling is not re-derived (${expected.ruling === undefined ? 'recorded none' : 'recorded one'}, ${actual.ruling === undefined ? 'replay rules none' : 'replay rules otherwise'})`,
        ...(expected.ruling === undefined ? {} : { recorded: expected.ruling }),
        ...(actual.ruling === undefined ? {} : { rederived: actual.ruling }),
        changes: fieldChanges(expected.ruling, actual.ruling, 'ruling'),
        ...(expected.ruling === undefined ? {} : { expected: expected.ruling }),
        ...(actual.ruling === undefined ? {} : { actual: actual.ruling }),
      });
    } else {
      const changes = fieldChanges(stripped(expected, links), stripped(actual, links));
      divergences.push({ index: v.index, kind: 'entry-diverged', message: `entry ${v.index} (${expected.kind}) re-derives to different content`, recorded: expected, rederived: actual, changes, expected, actual });
    }
    if (divergences.length >= max) stop(v.index);
  };

  const visit = async (v: VerifiedEntry) => {
    if (stoppedAt !== undefined) return;
    current.index = v.index;
    const e = v.entry;
    switch (e.kind) {
      case 'genesis': {
        const r = await engine.open(e.spec);
        if (!r.ok) return rejected(v, r);
        sessionId = r.sessionId;
        if (r.sessionId !== v.hash) {
          await compare(v, r.sessionId);
          stop(v.index);
        }
        break;
      }
      case 'frame': {
        const r = await engine.frame({ sessionId, ordinal: e.ordinal, time: e.time, ...(e.data === undefined ? {} : { data: e.data }) });
        if (!r.ok) return rejected(v, r);
        frame = { entryHash: r.entryHash, frameRoot: r.frameRoot };
        await compare(v, r.entryHash);
        break;
      }
      case 'turn': {
        const body = e.body.kind === 'authored' ? { kind: 'authored' as const, bytes: fromBase64(e.body.bytes)! } : { kind: 'stand-down' as const, failureClass: e.body.failureClass };
        const r = await engine.turn(
          { sessionId, ordinal: e.ordinal, parentHash: frame!.entryHash, frameRoot: frame!.frameRoot, body },
          e.ruling === undefined ? {} : { recordedRuling: e.ruling },
        );
        if (!r.ok) return rejected(v, r);
        turns++;
        await compare(v, r.entryHash);
        break;
      }
      case 'finalize': {
        const r = await engine.finalize(sessionId, e.artifacts);
        if (!r.ok) return rejected(v, r);
        await compare(v, r.receipt.head);
        break;
      }
    }
    options.onEntry?.(v.index);
  };

  // The one streaming chain verifier (what `streamVerifiedEntries` runs), called directly so this
  // module stays free of file I/O: the audit page runs the same replay in its worker.
  const chain = await verifyChunks(sha256, chunks, {
    onEntry: (v) => visit(v),
    requireSealed: options.requireSealed ?? true,
    ...(options.pin === undefined ? {} : { pin: options.pin }),
  });
  if (!chain.ok) return { ...chain, stage: 'chain' };
  const summary = { sessionId: chain.sessionId, size: chain.size, receiptRoot: chain.receiptRoot };
  if (divergences.length > 0) {
    return { ok: false, stage: 'replay', ...summary, divergences, ...(stoppedAt === undefined ? {} : { stoppedAt }), externalFacts: facts };
  }
  return { ok: true, ...summary, sealed: chain.sealed, turns, rulings, externalFacts: facts };
}

/**
 * {@link replayInto} a fresh memory store: every re-derived entry stays on the
 * heap (the page's replay, and the reference the disk scratch is tested against).
 *
 * @example
 * const r = await replayInMemory([bundleBytes]);
 */
export function replayInMemory(chunks: BundleChunks, options: ReplayOptions = {}): Promise<ReplayResult> {
  return replayInto(new MemoryStore(), chunks, options);
}
