/**
 * What the page shows of one verified entry: a flat, display-only summary
 * read from the entry's fields (never trusted for a verdict — the verdict is
 * the chain verifier's). Unknown shapes are kept as text, never executed or
 * parsed as markup.
 */
import { fromBase64, type Entry } from '../../protocol/index.js';

/** One timeline row. Every string here is untrusted bundle text. */
export interface Row {
  readonly i: number;
  /** `unverified`: a line of a failed day from its first bad entry on (listed, never trusted; `hash` is empty). */
  readonly kind: Entry['kind'] | 'unverified';
  /** The entry hash (hex); a loaded day's rows get it from the verification worker. */
  hash: string;
  readonly bytes: number;
  ordinal?: number;
  /** Frame time (ms); a turn carries the time of the frame it answers. */
  time?: number;
  agent?: string;
  action?: string;
  market?: string;
  side?: string;
  size?: string;
  nonce?: string;
  signer?: string;
  /** admitted | refused | stand-down | note (authored, no intent) | frame | genesis | seal. */
  outcome?: string;
  /** Ruling code (first refusing stage's code) or `admitted`. */
  code?: string;
  stage?: string;
  /** The ruling's part that refused: intent (the contract), policy (the mandate) or verdict (the judge). */
  section?: string;
  message?: string;
  verdict?: { decision?: string; code?: string; message?: string; signer?: string; model?: string; signed: boolean; admitted?: boolean; panel?: PanelAnswerRow[]; quorum?: { k: number; n: number; allow: number } };
  transitions?: string[];
  quota?: { used: number; locked: number; cap: number };
  standDown?: string;
  /** Runtime notices / diagnostics the frame or the seal carries, as `probe: outcome`. */
  notices?: string[];
  /** Authored text (UTF-8 of the turn's bytes), cut at AUTHORED_PREVIEW characters: a row is a compact summary; the detail asks the worker for the whole entry. */
  authored?: string;
  /** An unverified line: why (the first bad entry's index and code), and what the line claims to be, as text. */
  unverified?: { readonly why: string; readonly claims: string };
  /** Set by replay in the page: how this entry diverged (kind: message). */
  diverged?: string;
  /** Set by replay in the page: the fields that differ (path, recorded, re-derived), as text. */
  changes?: readonly { readonly path: string; readonly recorded: string; readonly rederived: string }[];
  /** Fills reported in a frame: market and size, for exposure (price and agent as text, when given). */
  fills?: { market: string; size: number; side: string; action: string; price?: string; agent?: string }[];
  /** A frame's prices by market, as the runtime reported them. */
  prices?: [string, string][];
  /** A frame's referee transitions (redemptions, releases, termination), in words. */
  frameTransitions?: string[];
}

/** One judge's recorded answer in a panel verdict, as the detail shows it. */
export interface PanelAnswerRow {
  judge: string;
  model?: string;
  decision?: string;
  admitted: boolean;
  code?: string;
  message?: string;
  /** The key the signature recovered to (recorded), when it recovered. */
  signer?: string;
  signed: boolean;
  failure?: string;
}

/** Characters of authored text a row keeps. */
export const AUTHORED_PREVIEW = 240;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number => (typeof v === 'string' || typeof v === 'number' ? Number(v) : Number.NaN);
const utf8 = new TextDecoder('utf-8', { fatal: false });

function notices(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out = v.filter(isObj).map((n) => `${str(n['probe']) ?? '?'}: ${str(n['outcome']) ?? '?'}${typeof n['ordinal'] === 'number' ? ` (ordinal ${n['ordinal']})` : ''}`);
  return out.length > 0 ? out : undefined;
}

/** The display row of a verified entry at `index`, given the time of the frame it answers. */
export function rowOf(index: number, hash: string, bytes: number, e: Entry, frameTime: number | undefined): Row {
  const row: Row = { i: index, kind: e.kind, hash, bytes };
  switch (e.kind) {
    case 'genesis':
      row.outcome = 'genesis';
      row.message = e.spec.name;
      return row;
    case 'finalize': {
      row.outcome = 'seal';
      row.message = `seal over ${e.size} entries, root ${e.root}`;
      const n = isObj(e.artifacts) ? notices(e.artifacts['notices']) : undefined;
      if (n) row.notices = n;
      return row;
    }
    case 'frame': {
      row.ordinal = e.ordinal;
      row.time = e.time;
      row.outcome = 'frame';
      const d = e.data;
      if (isObj(d)) {
        const n = notices(d['notices']);
        if (n) row.notices = n;
        if (Array.isArray(d['fills'])) {
          row.fills = d['fills'].filter(isObj).filter((f) => typeof f['market'] === 'string').map((f) => ({ market: str(f['market']) ?? '?', size: num(f['size']), side: str(f['side']) ?? '', action: str(f['action']) ?? '', ...(str(f['price']) === undefined ? {} : { price: str(f['price'])! }), ...(str(f['agent']) === undefined ? {} : { agent: str(f['agent'])! }) }));
        }
        if (isObj(d['prices'])) row.prices = Object.entries(d['prices']).filter((kv): kv is [string, string] => typeof kv[1] === 'string' || typeof kv[1] === 'number').map(([k, v]) => [k, String(v)]);
        const ref = d['referee'];
        if (isObj(ref)) {
          const t: string[] = [];
          for (const x of Array.isArray(ref['redemptions']) ? ref['redemptions'].filter(isObj) : []) t.push(`redeem ticket ${String(x['ticket'])}${isObj(x['intent']) ? ` (${[str(x['intent']['agent_id']), str(x['intent']['action']), str(x['intent']['market']), str(x['intent']['size'])].filter(Boolean).join(' ')})` : ''}, signed by the executor`);
          for (const x of Array.isArray(ref['releases']) ? ref['releases'].filter(isObj) : []) t.push(`release ticket ${String(x['ticket'])} by ${str(x['by']) ?? '?'}${x['signature'] === undefined ? ' (unsigned)' : ', signed'}`);
          if (isObj(ref['terminate'])) t.push('terminate the mandate, signed by the principal');
          if (t.length > 0) row.frameTransitions = t;
        }
      }
      return row;
    }
    case 'turn':
      break;
  }
  row.ordinal = e.ordinal;
  if (frameTime !== undefined) row.time = frameTime;
  if (e.body.kind === 'stand-down') {
    row.outcome = 'stand-down';
    row.standDown = e.body.failureClass;
    row.code = `stand-down:${e.body.failureClass}`;
  } else {
    const raw = fromBase64(e.body.bytes);
    const text = raw ? utf8.decode(raw) : '';
    row.authored = text.length > AUTHORED_PREVIEW ? `${text.slice(0, AUTHORED_PREVIEW)}…` : text;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const intent = isObj(body) ? body['intent'] : undefined;
    if (isObj(intent)) {
      for (const k of ['agent_id', 'action', 'market', 'side', 'size', 'nonce'] as const) {
        const v = str(intent[k]);
        if (v !== undefined) row[k === 'agent_id' ? 'agent' : k] = v;
      }
    }
    row.outcome = isObj(intent) ? 'admitted' : 'note';
  }
  const r = e.ruling;
  if (isObj(r)) {
    for (const stageKey of ['intent', 'policy', 'verdict'] as const) {
      const s = r[stageKey];
      if (!isObj(s)) continue;
      if (stageKey === 'intent') {
        const signer = str(s['signer']);
        const agent = str(s['agent_id']);
        const nonce = str(s['nonce']);
        if (signer !== undefined) row.signer = signer;
        if (agent !== undefined) row.agent = agent;
        if (nonce !== undefined) row.nonce = nonce;
      }
      if (stageKey === 'verdict') {
        const sig = str(s['signature']);
        const v: NonNullable<Row['verdict']> = { signed: sig !== undefined };
        const dec = str(s['decision']);
        const code = str(s['code']);
        const msg = str(s['message']);
        const signer = str(s['signer']);
        const model = str(s['model']);
        if (model !== undefined) v.model = model;
        if (typeof s['admitted'] === 'boolean') v.admitted = s['admitted'];
        if (Array.isArray(s['panel'])) v.panel = s['panel'].filter(isObj).map(panelAnswer);
        const q = s['quorum'];
        if (isObj(q) && typeof q['k'] === 'number' && typeof q['n'] === 'number' && typeof q['allow'] === 'number') v.quorum = { k: q['k'], n: q['n'], allow: q['allow'] };
        if (dec !== undefined) v.decision = dec;
        if (code !== undefined) v.code = code;
        if (msg !== undefined) v.message = msg;
        if (signer !== undefined) v.signer = signer;
        row.verdict = v;
      }
      if (s['admitted'] === false && row.outcome !== 'refused') {
        row.outcome = 'refused';
        row.code = str(s['code']) ?? 'refused';
        row.stage = str(s['stage']) ?? stageKey;
        row.section = stageKey;
        row.message = str(s['message']) ?? '';
      }
    }
    if (row.outcome === 'admitted') row.code = 'admitted';
    const q = r['quota'];
    if (isObj(q)) row.quota = { used: num(q['used']), locked: num(q['locked']), cap: num(q['cap']) };
    if (Array.isArray(r['transitions'])) {
      // Transitions come from the frame this turn answers, applied before the turn is ruled: not caused by its ruling.
      row.transitions = r['transitions'].filter(isObj).map((t) => `${str(t['op']) ?? '?'} ticket ${String(t['ticket'])}${typeof t['by'] === 'string' ? ` by ${t['by']}` : ''}${t['ok'] === false ? ` — refused${str(t['code']) ? ` (${str(t['code'])}${str(t['message']) ? `: ${str(t['message'])}` : ''})` : ''}` : ' — applied'}`);
    }
  }
  if (row.outcome === 'note' && row.code === undefined) row.code = 'note';
  return row;
}

/** The time a frame row carries, for the turns that answer it (`undefined`: not a frame). */
export function frameTimeOf(row: Row): number | undefined {
  return row.kind === 'frame' && typeof row.time === 'number' ? row.time : undefined;
}

/** The row of line `i` read as an entry (unverified here); a line that is not one gets a bare row (it never verified, so the page drops it). */
export function rowOfLine(i: number, line: Uint8Array, frameTime: number | undefined): Row {
  try {
    const e = JSON.parse(utf8.decode(line)) as Entry;
    if (typeof e === 'object' && e !== null && typeof e.kind === 'string') return rowOf(i, '', line.length, e, frameTime);
  } catch {
    // not JSON: not an entry
  }
  return { i, kind: 'unverified', hash: '', bytes: line.length };
}

function panelAnswer(a: Obj): PanelAnswerRow {
  const out: PanelAnswerRow = { judge: str(a['judge']) ?? '?', admitted: a['admitted'] === true, signed: typeof a['signature'] === 'string' };
  for (const k of ['model', 'decision', 'code', 'message', 'signer', 'failure'] as const) {
    const v = str(a[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}
