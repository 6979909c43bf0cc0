/** Messages between the page and its verification worker. */
import type { Row } from './rows.js';

/** What the page asks the worker. */
export type ToWorker =
  | { readonly type: 'verify'; readonly bundle: Blob; readonly checkpoint?: string; readonly vkey?: string; readonly unsealed?: boolean }
  | { readonly type: 'receipt'; readonly index: number; readonly download: boolean };

/** The one verdict banner's content. */
export type Verdict =
  | { readonly state: 'pinned'; readonly root: string; readonly size: number; readonly total: number; readonly sessionId: string; readonly signedBy: readonly string[]; readonly coversAll: boolean; readonly sealed: boolean }
  | { readonly state: 'unpinned'; readonly root: string; readonly size: number; readonly sessionId: string; readonly sealed: boolean; readonly why: string }
  | { readonly state: 'failed-entry'; readonly index: number; readonly code: string; readonly message: string }
  | { readonly state: 'failed-pin'; readonly stage: string; readonly code: string; readonly message: string };

/** What the worker tells the page. */
export type FromWorker =
  | { readonly type: 'progress'; readonly bytes: number; readonly total: number; readonly entries: number }
  | { readonly type: 'rows'; readonly rows: Row[] }
  | { readonly type: 'done'; readonly verdict: Verdict; readonly ms: number }
  | { readonly type: 'receipt'; readonly index: number; readonly download: boolean; readonly text?: string; readonly proof?: readonly string[]; readonly size?: number; readonly root?: string; readonly problem?: string };
