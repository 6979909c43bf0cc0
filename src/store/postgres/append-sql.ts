/**
 * The PostgreSQL compare-and-append, as statements (schema version 7).
 *
 * The head of a session is its last entry, so an append is ONE `INSERT` of
 * the entry row and no other row changes. The row carries the phase after
 * it and its `node`: the last hash of the Merkle frontier after it, which is
 * the root of the largest complete subtree ending at this entry. The
 * frontier of a session of `size` entries is the `node` of the entries at
 * `end - 1` for each prefix sum `end` of `size`'s binary decomposition
 * (size 13 = 8 + 4 + 1: entries 7, 11 and 12), read back by
 * {@link AppendStatements.head} in one statement.
 *
 * The insert happens only if the entry before it (`idx = size - 1`) still
 * has the expected hash and is not a `finalize`, and no claimed nonce is
 * reserved. The `(session_id, idx)` primary key makes exactly one writer of
 * an index win; a writer whose index is taken (it lost a race, and waited
 * for the winner's commit, or its expected head is an older entry) writes
 * nothing. A lone append has no `ON CONFLICT DO NOTHING`, which costs every
 * append a second probe of the key and a second WAL record (measured: 2–3%
 * of one session's appends per second): a taken index raises a unique
 * violation on `entries_pkey` ({@link isLostRace}), which the store reads as
 * a refused append. An append in a group-commit transaction keeps the
 * clause, so a taken index does not void the other appends of the batch.
 * The key is also the slot's key:
 * a frame or turn sits at the index its ordinal gives (`protocol/slots.ts`,
 * checked before any store work by `store/request.ts`). Nonce reservations
 * are inserted by the same statement, only if the entry was. A refused
 * append writes nothing, and the classify statement then names why.
 *
 * Appends that claim no nonce use a statement without the nonce parts
 * (cheaper on the server); both are built here from the same clauses, so
 * the rule has one text.
 */
import { TallyError } from '../../protocol/errors.js';
import type { AppendRequest, NonceClaim, SessionHead } from '../types.js';

/** The answer to one append request: `ok` or why nothing was written. */
export type AppendCode = 'ok' | 'head-moved' | 'nonce-taken' | 'sealed' | 'unknown-session';

const CODES: ReadonlySet<string> = new Set<AppendCode>(['ok', 'head-moved', 'nonce-taken', 'sealed', 'unknown-session']);

/** Whether the database answered a code this release knows. */
export function isAppendCode(x: unknown): x is AppendCode {
  return typeof x === 'string' && CODES.has(x);
}

/** A named prepared statement. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/** The two append statements of one setting (lone or in a batch). */
export interface AppendPair {
  /** Appends one request that claims no nonce: parameters {@link appendValues}`(r, false)`; `rowCount` 1 written, 0 refused. */
  readonly plain: Statement;
  /** Appends one request with its nonce claims: parameters {@link appendValues}`(r, true)`; `rowCount` 1 written, 0 refused. */
  readonly withNonces: Statement;
}

/** The prepared statements of one schema (`s` is a quoted identifier). */
export interface AppendStatements {
  /** Outside a transaction: an append at a taken index raises a unique violation ({@link isLostRace}). */
  readonly lone: AppendPair;
  /** Inside a group-commit transaction: an append at a taken index writes nothing (`ON CONFLICT DO NOTHING`) and the batch goes on. */
  readonly batch: AppendPair;
  /** Why a request was refused: parameters {@link classifyValues}; one row `code`. */
  readonly classify: { readonly name: string; readonly text: string };
  /** The head of session `$1`: no row if there is none, else {@link HeadRow}. */
  readonly head: { readonly name: string; readonly text: string };
}

/** What {@link AppendStatements.head} reads: the last entry, and the frontier from the nodes (`want` of them expected). */
export interface HeadRow {
  readonly idx: number;
  readonly hash: string;
  readonly phase: string | null;
  readonly frontier: (string | null)[] | null;
  readonly want: number;
}

/**
 * The entry indexes whose nodes make the frontier of `size` entries, as SQL
 * over the integer expression `size` (one row `idx` per set bit, left to
 * right), for the head statement. Migration 6 holds a frozen copy of it.
 */
export function frontierIndexesSql(size: string): string {
  return `SELECT (sum(1::bigint << b) OVER (ORDER BY b DESC) - 1)::integer AS idx, row_number() OVER (ORDER BY b DESC)::integer AS j
    FROM generate_series(30, 0, -1) AS b WHERE ((${size})::bigint & (1::bigint << b)) <> 0`;
}

/** The statements for schema `s` (an already quoted identifier). */
export function appendStatements(s: string): AppendStatements {
  const nonceTaken = (agents: string, nonces: string): string =>
    `EXISTS (SELECT 1 FROM unnest(${agents}::text[], ${nonces}::text[]) AS c(a, n) JOIN ${s}.nonces x ON x.agent_id = c.a AND x.nonce = c.n)`;
  // The parent row is joined, not tested with EXISTS: one index scan node
  // instead of a sub-plan around one (measured: about 6 µs less server time
  // per append). The key makes the join one row at most.
  const insert = (extra: string, onConflict: string): string =>
    `INSERT INTO ${s}.entries (session_id, idx, hash, kind, ordinal, bytes, node, phase)
     SELECT $1, $2::integer, $4, $5::text, $6, $7, $8, $9 FROM ${s}.entries p
     WHERE p.session_id = $1 AND p.idx = $2::integer - 1 AND p.hash = $3 AND p.kind <> 'finalize'${extra}${onConflict}`;
  const pair = (name: string, onConflict: string): AppendPair => ({
    plain: { name, text: insert('', onConflict) },
    withNonces: {
      name: `${name}_nonces`,
      text: `WITH e AS (${insert(` AND NOT ${nonceTaken('$10', '$11')}`, onConflict)} RETURNING 1),
       n AS (
         INSERT INTO ${s}.nonces (agent_id, nonce, intent_hash, session_id, idx)
         SELECT c.a, c.n, c.h, $1, $2 FROM unnest($10::text[], $11::text[], $12::text[]) WITH ORDINALITY AS c(a, n, h, o), e ORDER BY c.o
       )
       SELECT 1 FROM e`,
    },
  });
  return {
    lone: pair('tally_append7', ''),
    batch: pair('tally_append7_batch', '\n     ON CONFLICT DO NOTHING'),
    classify: {
      name: 'tally_append7_classify',
      text: `SELECT CASE
         WHEN NOT EXISTS (SELECT 1 FROM ${s}.sessions x WHERE x.id = $1) THEN 'unknown-session'
         WHEN (SELECT l.kind FROM ${s}.entries l WHERE l.session_id = $1 ORDER BY l.idx DESC LIMIT 1) = 'finalize' THEN 'sealed'
         WHEN ${nonceTaken('$4', '$5')}
           AND EXISTS (SELECT 1 FROM ${s}.entries p WHERE p.session_id = $1 AND p.idx = $2 - 1 AND p.hash = $3)
           AND NOT EXISTS (SELECT 1 FROM ${s}.entries q WHERE q.session_id = $1 AND q.idx = $2) THEN 'nonce-taken'
         ELSE 'head-moved' END AS code`,
    },
    head: {
      name: 'tally_head7',
      text: `WITH last AS (
         SELECT idx, hash, phase FROM ${s}.entries WHERE session_id = $1 ORDER BY idx DESC LIMIT 1
       ), ends AS (${frontierIndexesSql('(SELECT idx + 1 FROM last)')})
       SELECT last.idx, last.hash, last.phase,
         (SELECT array_agg(encode(f.node, 'hex') ORDER BY f.idx) FROM ends LEFT JOIN ${s}.entries f ON f.session_id = $1 AND f.idx = ends.idx) AS frontier,
         (SELECT count(*) FROM ends)::integer AS want
       FROM last`,
    },
  };
}

/**
 * Whether `e` is the unique violation of an append that lost the race for
 * its index: another writer's entry at that index committed first. Nothing
 * of the statement was written; outside a transaction the store then asks
 * the classify statement why (in a batch the whole transaction failed, and
 * each append is retried alone).
 */
export function isLostRace(e: unknown): boolean {
  return isUniqueViolation(e, 'entries_pkey');
}

/** Whether `e` is PostgreSQL's unique violation (23505) of `constraint`. */
export function isUniqueViolation(e: unknown, constraint: string): boolean {
  const err = e as { code?: unknown; constraint?: unknown } | null;
  return err?.code === '23505' && err.constraint === constraint;
}

/**
 * The parameters of an append statement for `r`: session, expected size and
 * head, then the entry row (hash, kind, ordinal, bytes, node and phase after
 * it), then — with `nonces` — the claims as three parallel arrays, sorted
 * and deduplicated ({@link sortedDistinct}).
 */
export function appendValues(r: AppendRequest, nonces: boolean): unknown[] {
  const e = r.entry;
  const v: unknown[] = [r.sessionId, r.expected.size, r.expected.head, e.hash, e.kind, e.ordinal ?? null, Buffer.from(e.bytes.buffer, e.bytes.byteOffset, e.bytes.byteLength), frontierNode(r.next), r.next.phase];
  if (nonces) {
    const claims = sortedDistinct(r.nonces);
    v.push(claims.map((c) => c.agentId), claims.map((c) => c.nonce), claims.map((c) => c.intentHash));
  }
  return v;
}

const HASH_HEX = /^[0-9a-f]{64}$/;

/**
 * The node a head stores: its frontier's last hash, as 32 bytes (the rest of
 * the frontier is read back from earlier entries, so a head must carry the
 * true frontier of its size, as the engine's always do). Throws
 * `TALLY_STORE_MISUSE` if the frontier is empty or its last hash is not
 * lowercase hex.
 */
export function frontierNode(h: SessionHead): Buffer {
  const last = h.frontier[h.frontier.length - 1];
  if (last === undefined || !HASH_HEX.test(last)) {
    throw new TallyError('TALLY_STORE_MISUSE', `A head needs a frontier that ends in a lowercase hex hash (session ${h.sessionId.slice(0, 16)}…, size ${h.size}).`);
  }
  return Buffer.from(last, 'hex');
}

/** The parameters of the classify statement for a refused `r`. */
export function classifyValues(r: AppendRequest): unknown[] {
  const claims = sortedDistinct(r.nonces);
  return [r.sessionId, r.expected.size, r.expected.head, claims.map((c) => c.agentId), claims.map((c) => c.nonce)];
}

/** One order for every transaction, so two appends reserving overlapping nonce sets cannot deadlock. */
export function sortedDistinct(claims: readonly NonceClaim[]): NonceClaim[] {
  const byKey = new Map<string, NonceClaim>();
  for (const c of claims) {
    const k = `${c.agentId.length}:${c.agentId}:${c.nonce}`;
    if (!byKey.has(k)) byKey.set(k, c);
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c);
}
