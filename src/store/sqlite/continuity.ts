/**
 * The SQLite store's continuity record (migration 7; the PostgreSQL
 * counterpart is `../postgres/continuity.ts`). A SQLite file has no timeline
 * (always 1); its identity is `sqlite:<store id>:<device>:<inode>`: the
 * random id migration 7 writes into the file tells one store from another,
 * and the device and inode of the file tell the file the engine signed from
 * from a copy of it (a restored backup, a moved file). A copy written over
 * the same inode keeps the identity: witnesses catch that one. The position
 * of a signing-log row is its sequence number.
 */
import type Database from 'better-sqlite3';
import { TallyError } from '../../protocol/errors.js';
import type { ContinuityEvent, ContinuityState, SignedCheckpointRecord, StorePosition } from '../types.js';
import type { FileIdentity } from './recovery.js';
import { toPositioned, type PositionedRow } from '../rows.js';

/** Migration 7: the store id, positions on signing-log rows, and the continuity record; append-only. */
export const SQLITE_V7_SQL = `
CREATE TABLE store_identity (
  one INTEGER PRIMARY KEY CHECK (one = 1),
  id  TEXT    NOT NULL CHECK (length(id) = 32)
);
INSERT INTO store_identity (one, id) VALUES (1, lower(hex(randomblob(16))));
CREATE TRIGGER store_identity_immutable_update BEFORE UPDATE ON store_identity
BEGIN SELECT RAISE(ABORT, 'tally: the store identity is immutable'); END;
CREATE TRIGGER store_identity_immutable_delete BEFORE DELETE ON store_identity
BEGIN SELECT RAISE(ABORT, 'tally: the store identity is immutable'); END;
ALTER TABLE signed_checkpoints ADD COLUMN seq INTEGER CHECK (seq >= 1);
ALTER TABLE signed_checkpoints ADD COLUMN db_system TEXT;
ALTER TABLE signed_checkpoints ADD COLUMN db_timeline INTEGER CHECK (db_timeline >= 1);
ALTER TABLE signed_checkpoints ADD COLUMN db_lsn TEXT;
CREATE UNIQUE INDEX signed_checkpoints_seq ON signed_checkpoints (seq);
CREATE TABLE continuity (
  seq         INTEGER PRIMARY KEY,
  kind        TEXT    NOT NULL CHECK (kind IN ('refused', 'acknowledged')),
  db_system   TEXT    NOT NULL,
  db_timeline INTEGER NOT NULL CHECK (db_timeline >= 1),
  db_lsn      TEXT    NOT NULL,
  at          INTEGER NOT NULL CHECK (at >= 0),
  detail      TEXT    NOT NULL,
  lost_origin TEXT,
  lost_size   INTEGER CHECK (lost_size >= 1),
  lost_root   TEXT    CHECK (length(lost_root) = 64)
);
CREATE TRIGGER continuity_immutable_update BEFORE UPDATE ON continuity
BEGIN SELECT RAISE(ABORT, 'tally: the continuity record is append-only'); END;
CREATE TRIGGER continuity_immutable_delete BEFORE DELETE ON continuity
BEGIN SELECT RAISE(ABORT, 'tally: the continuity record is append-only'); END;
`;

/** The columns a positioned signing-log row is read with. */
export const POSITIONED_COLS = 'origin, size, root, signed_at, db_system, db_timeline, db_lsn';

interface EventRow {
  readonly kind: string;
  readonly db_system: string;
  readonly db_timeline: number;
  readonly db_lsn: string;
  readonly at: number;
  readonly detail: string;
  readonly lost_origin: string | null;
  readonly lost_size: number | null;
  readonly lost_root: string | null;
}

/** The continuity statements of one SQLite connection. */
export class SqliteContinuity {
  /** This file's identity (the `system` of every position). */
  readonly system: string;
  readonly #next: Database.Statement<[], { readonly n: number }>;
  readonly #last: Database.Statement<[], PositionedRow>;
  readonly #held: Database.Statement<[string, number, string], { readonly one: number }>;
  readonly #events: Database.Statement<[], EventRow>;
  readonly #insertEvent: Database.Statement<unknown[]>;
  readonly #heads: Database.Statement<[], PositionedRow>;
  readonly #path: string;

  /** Prepares the statements on `db` (migrated), the file at `path` being `file`. */
  constructor(db: Database.Database, path: string, file: FileIdentity | undefined) {
    this.#path = path;
    const id = db.prepare<[], { id: string }>('SELECT id FROM store_identity WHERE one = 1').get()?.id;
    if (id === undefined) throw new TallyError('TALLY_STORE_CORRUPT', `SQLite database ${path} has no store identity (migration 7).`);
    this.system = `sqlite:${id}:${file === undefined ? 'memory' : `${file.dev}:${file.ino}`}`;
    this.#next = db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS n FROM signed_checkpoints');
    this.#last = db.prepare(`SELECT ${POSITIONED_COLS} FROM signed_checkpoints WHERE seq IS NOT NULL ORDER BY seq DESC LIMIT 1`);
    this.#held = db.prepare('SELECT 1 AS one FROM signed_checkpoints WHERE origin = ? AND size = ? AND root = ?');
    this.#events = db.prepare('SELECT kind, db_system, db_timeline, db_lsn, at, detail, lost_origin, lost_size, lost_root FROM continuity ORDER BY seq');
    this.#insertEvent = db.prepare('INSERT INTO continuity (kind, db_system, db_timeline, db_lsn, at, detail, lost_origin, lost_size, lost_root) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
    this.#heads = db.prepare(`SELECT ${POSITIONED_COLS} FROM signed_checkpoints AS a WHERE size = (SELECT MAX(size) FROM signed_checkpoints AS b WHERE b.origin = a.origin) ORDER BY origin`);
  }

  /** The position the next signing-log row takes (inside the recording transaction). */
  nextPosition(): StorePosition & { readonly seq: number } {
    const seq = this.#next.get()!.n;
    return { system: this.system, timeline: 1, lsn: String(seq), seq };
  }

  /** The continuity state, `mine` being the store's last written row. */
  state(mine: SignedCheckpointRecord | undefined): ContinuityState {
    const seq = this.#next.get()!.n - 1;
    const last = this.#last.get();
    return {
      current: { system: this.system, timeline: 1, lsn: String(seq) },
      ...(last ? { last: toPositioned(last) } : {}),
      ...(mine ? { mine: { record: mine, held: this.#held.get(mine.origin, mine.size, mine.root) !== undefined } } : {}),
      events: this.#events.all().map((r) => this.#toEvent(r)),
    };
  }

  record(e: ContinuityEvent): void {
    this.#insertEvent.run(e.kind, e.position.system, e.position.timeline, e.position.lsn, e.at, e.detail, e.lost?.origin ?? null, e.lost?.size ?? null, e.lost?.root ?? null);
  }

  heads(): SignedCheckpointRecord[] {
    return this.#heads.all().map(toPositioned);
  }

  #toEvent(r: EventRow): ContinuityEvent {
    if (r.kind !== 'refused' && r.kind !== 'acknowledged') throw new TallyError('TALLY_STORE_CORRUPT', `The continuity record of ${this.#path} holds an event of kind ${JSON.stringify(r.kind)}.`);
    const base = { kind: r.kind, position: { system: r.db_system, timeline: r.db_timeline, lsn: r.db_lsn }, at: r.at, detail: r.detail } as const;
    return r.lost_origin === null || r.lost_size === null || r.lost_root === null ? base : { ...base, lost: { origin: r.lost_origin, size: r.lost_size, root: r.lost_root } };
  }
}
