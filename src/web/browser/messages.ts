/** Messages between the page and its verification worker. */
import type { ChainPin } from '../../protocol/index.js';
import type { Row } from './rows.js';
import type { RowSplit } from './row-parts.js';

/** What the page asks the worker. */
export type ToWorker =
  | { readonly type: 'verify'; readonly bundle: Blob; readonly checkpoint?: string; readonly vkey?: string; readonly policy?: string; readonly unsealed?: boolean; readonly pin?: ChainPin; readonly logProof?: string; readonly logKey?: string; readonly logIdentity?: readonly string[] }
  | { readonly type: 'receipt'; readonly index: number; readonly download: boolean }
  | { readonly type: 'replay' }
  /** The exact bytes of entry `index` (its canonical JSON line), for the detail panel. */
  | { readonly type: 'entry'; readonly index: number }
  /** Start following a live day: each poll's new entries (whole lines, in order) arrive by one `append`, with a checkpoint at exactly that size when the engine signs. */
  | { readonly type: 'follow' }
  /** `log`: with a log key or identity pinned, the binding the engine served of that checkpoint (`GET …/log-proof?size=n`, absent when it served none), checked as a loaded day's. */
  | { readonly type: 'append'; readonly pieces: readonly Uint8Array[]; readonly checkpoint?: string; readonly vkey?: string; readonly log?: { readonly logProof?: string; readonly logKey?: string; readonly logIdentity?: readonly string[] } }
  /** Check an x402 evidence pack (its text) with the engine keys, under the witness policy when given. */
  | { readonly type: 'evidence'; readonly pack: string; readonly vkey?: string; readonly policy?: string };

/** What the page shows of an evidence pack: what it proves, or the code and reason it was refused with. */
export type PackReport =
  | {
      readonly state: 'verified';
      readonly session: string;
      readonly size: number;
      readonly root: string;
      readonly principal: string;
      readonly paymentHash: string;
      readonly ruling: string;
      readonly rederived: boolean;
      readonly settlements: readonly string[];
      readonly final: string;
      readonly transaction?: string;
      readonly reasons: readonly string[];
      readonly witnessed?: Witnessed;
    }
  | { readonly state: 'refused'; readonly stage: string; readonly code: string; readonly message: string };

/** One entry replay did not re-derive (texts are canonical JSON, cut at 2000 characters). */
export interface ReplayDivergenceView {
  readonly index: number;
  readonly kind: 'ruling-diverged' | 'entry-diverged' | 'rejected';
  readonly message: string;
  readonly recorded?: string;
  readonly rederived?: string;
  /** The fields that differ, as text: path, recorded and re-derived values (canonical JSON, or "(absent)"). */
  readonly changes: readonly { readonly path: string; readonly recorded: string; readonly rederived: string }[];
}

/** What `replay` said about the day, as the page shows it. */
export interface ReplayReport {
  /** replayed: every ruling re-derived; diverged: some entries were not; chain: the chain failed first; error: replay itself threw (`error` says what). */
  readonly state: 'replayed' | 'diverged' | 'chain' | 'error';
  readonly ruler: 'intent' | 'referee' | 'none' | 'payments' | 'ap2';
  readonly turns: number;
  readonly rulings: number;
  readonly divergences: readonly ReplayDivergenceView[];
  /** Facts taken from the transcript because one bundle cannot re-derive them (trusted, not verified). */
  readonly facts: readonly { readonly index: number; readonly text: string }[];
  readonly stoppedAt?: number;
  readonly chain?: { readonly index: number; readonly code: string; readonly message: string };
  readonly error?: string;
}

/** A witness quorum that was met: k of the policy's n witnesses cosigned; the quorum needs q at its top. */
export interface Witnessed {
  readonly k: number;
  readonly n: number;
  readonly q: number;
  readonly signed: readonly string[];
  readonly missing: readonly string[];
}

/** The day's log binding (PROTOCOL.md §15.5) as the banner shows it: checked against the pinned log key or under the pinned log identity (`identity`: its root key's name, its current shard, and whether the binding is in a previous shard), or given without either (not checked). */
export type LogBindingView =
  | { readonly checked: true; readonly index: number; readonly origin: string; readonly size: number; readonly seal: boolean; readonly witnessed?: Witnessed; readonly identity?: { readonly rootKey: string; readonly current: string; readonly previous: boolean } }
  | { readonly checked: false; readonly why: string };

/** A day whose chain verified on its own (self-consistent), though what pins it failed. */
export interface UnpinnedDay {
  readonly root: string;
  readonly size: number;
  readonly sessionId: string;
  readonly sealed: boolean;
}

/**
 * The one verdict banner's content. `pinned` is what `tally verify` calls
 * "valid, pinned": held to a signed checkpoint (`signedBy` non-empty) and/or
 * to values typed by hand (`hand`, as `--root --session --size`).
 */
export type Verdict =
  | { readonly state: 'pinned'; readonly root: string; readonly size: number; readonly total: number; readonly sessionId: string; readonly signedBy: readonly string[]; readonly coversAll: boolean; readonly sealed: boolean; readonly witnessed?: Witnessed; readonly hand?: ChainPin; readonly log?: LogBindingView }
  | { readonly state: 'unpinned'; readonly root: string; readonly size: number; readonly sessionId: string; readonly sealed: boolean; readonly why: string }
  | { readonly state: 'failed-entry'; readonly index: number; readonly code: string; readonly message: string }
  /** `day`: the chain verified unpinned (the day stays browsable); `chain`: it failed too. */
  | { readonly state: 'failed-pin'; readonly stage: string; readonly code: string; readonly message: string; readonly day?: UnpinnedDay; readonly chain?: { readonly index: number; readonly code: string; readonly message: string } };

/** What the worker tells the page. */
export type FromWorker =
  | { readonly type: 'progress'; readonly bytes: number; readonly total: number; readonly entries: number }
  | { readonly type: 'rows'; readonly rows: Row[] }
  /** `verified`: a loaded day's verified entries, how many and their hashes (32 bytes each), and where each rows worker's part starts, for the rows built after the verdict. */
  | { readonly type: 'done'; readonly verdict: Verdict; readonly ms: number; readonly sealsMandate: boolean; readonly live?: boolean; readonly verified?: { readonly count: number; readonly leaves: Uint8Array; readonly splits: readonly RowSplit[] } }
  | { readonly type: 'entry'; readonly index: number; readonly text: string }
  | { readonly type: 'replay-progress'; readonly entries: number; readonly total: number }
  | { readonly type: 'replayed'; readonly report: ReplayReport; readonly ms: number }
  | { readonly type: 'evidence-checked'; readonly report: PackReport; readonly ms: number }
  | { readonly type: 'receipt'; readonly index: number; readonly download: boolean; readonly text?: string; readonly proof?: readonly string[]; readonly size?: number; readonly root?: string; readonly problem?: string };
