/**
 * A day as a person reads it: the verified entries of a bundle turned into
 * timeline rows (each frame with its prices, fills and runtime notices; each
 * turn with who asked for what and the ruling; the seal), and the counts a
 * summary shows. Built in ONE streaming verification pass, so what is shown
 * is what verified (or everything up to the first bad entry).
 */
import { intentOfAuthored } from '../rules/index.js';
import { fromBase64, type CanonicalObject, type CanonicalValue, type ChainError, type ChainPin, type ChainSummary, type Entry, type VerifiedEntry } from '../protocol/index.js';
import { verifyBundleFile } from '../codec/index.js';
import { panelOf, panelSplit, type PanelView } from './panel-view.js';

export type { PanelView, PanelAnswerView } from './panel-view.js';

/** A runtime notice carried in a frame's `data.notices` or the seal's `artifacts.notices`. */
export interface Notice {
  readonly ordinal: number;
  readonly probe: string;
  /** `duplicate` or a session diagnostic. */
  readonly outcome: string;
}

/** One ruling member of a turn (`intent`, or another ruler's member), flattened. */
export interface RulingView {
  /** The ruling member's name (`intent`, …). */
  readonly by: string;
  readonly admitted: boolean;
  readonly stage?: string;
  readonly code?: string;
  readonly message?: string;
  readonly intent_hash?: string;
}

/** A row of the timeline. */
export type TimelineRow =
  | { readonly kind: 'genesis'; readonly index: number; readonly sessionId: string; readonly name: string; readonly agents: readonly string[]; readonly spec: CanonicalObject }
  | {
      readonly kind: 'frame';
      readonly index: number;
      readonly ordinal: number;
      readonly time: number;
      readonly prices?: Readonly<Record<string, string>>;
      readonly fills?: readonly CanonicalObject[];
      readonly notices?: readonly Notice[];
      /** Ticket transitions the runtime reports to the referee (`data.referee`): ticket ids. */
      readonly referee?: { readonly redeemed: readonly number[]; readonly released: readonly number[]; readonly terminate: boolean };
      readonly data?: CanonicalValue;
    }
  | {
      readonly kind: 'turn';
      readonly index: number;
      readonly ordinal: number;
      readonly time: number;
      readonly body: 'intent' | 'note' | 'stand-down';
      readonly failureClass?: string;
      readonly agent?: string;
      readonly action?: string;
      readonly market?: string;
      readonly side?: string;
      readonly size?: string;
      readonly target?: string;
      /** The agent's untrusted text (context, or the authored text if it is not JSON). */
      readonly text?: string;
      readonly rulings: readonly RulingView[];
      /** The referee's ticket for an admitted intent. */
      readonly ticket?: number;
      /** The referee's quota figures after this turn. */
      readonly quota?: Readonly<Record<string, string | number>>;
      /** Outcomes of the ticket transitions the answered frame carried. */
      readonly transitions?: readonly { readonly op: string; readonly ok: boolean; readonly ticket?: number; readonly code?: string; readonly message?: string }[];
      /** A panel's verdict on the intent: k of n, and who said what. */
      readonly panel?: PanelView;
    }
  | { readonly kind: 'seal'; readonly index: number; readonly size: number; readonly root: string; readonly artifacts?: CanonicalObject; readonly notices?: readonly Notice[] };

/** Counts over a day. */
export interface DayCounts {
  readonly entries: number;
  readonly frames: number;
  readonly turns: number;
  /** Turns that carried an intent. */
  readonly intents: number;
  readonly admitted: number;
  readonly rejected: number;
  /** Admitted intents by action. */
  readonly admittedByAction: Readonly<Record<string, number>>;
  /** Rejections by code (every ruling member, e.g. intent codes and referee codes). */
  readonly rejectedByCode: Readonly<Record<string, number>>;
  /** Authored turns without an intent. */
  readonly notes: number;
  readonly standDowns: Readonly<Record<string, number>>;
  /** Runtime notices by outcome (`duplicate` or a diagnostic). */
  readonly notices: Readonly<Record<string, number>>;
  /** Ticket transitions the referee applied (`redeem`, `release`, `terminate`), and the refused ones by code (from the rulings). */
  readonly transitions: Readonly<Record<string, number>>;
  /** The referee's quota figures after the last ruled turn, if the day ran under a mandate. */
  readonly quota?: Readonly<Record<string, string | number>>;
  /** Panel verdicts by split (`"2 of 3 allow → admitted"`). */
  readonly panels: Readonly<Record<string, number>>;
  /** Panel judges' answers by outcome: `ALLOW`, a code (`judge_denied`, …) or a failure class (`timeout`, …). */
  readonly judgeAnswers: Readonly<Record<string, number>>;
}

/** The timeline of a bundle and its verification verdict. */
export interface Timeline {
  readonly rows: readonly TimelineRow[];
  readonly verdict: ChainSummary | ChainError;
  readonly counts: DayCounts;
}

const decoder = new TextDecoder('utf-8', { fatal: false });

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function notices(v: unknown): Notice[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: Notice[] = [];
  for (const n of v) {
    if (isObject(n) && typeof n['ordinal'] === 'number' && typeof n['probe'] === 'string' && typeof n['outcome'] === 'string') {
      out.push({ ordinal: n['ordinal'], probe: n['probe'], outcome: n['outcome'] });
    }
  }
  return out.length > 0 ? out : undefined;
}

/** `data.prices` (a wake), or the prices in `data.markets[]` (the demo's OPEN frame). */
function pricesOf(d: Record<string, unknown>): Record<string, string> | undefined {
  if (isObject(d['prices'])) return d['prices'] as Record<string, string>;
  if (!Array.isArray(d['markets'])) return undefined;
  const out: Record<string, string> = {};
  for (const m of d['markets']) if (isObject(m) && typeof m['symbol'] === 'string' && typeof m['price'] === 'string') out[m['symbol']] = m['price'];
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Ticket ids in `data.referee` (redemptions, releases) and whether it terminates the mandate. */
function refereeReport(r: Record<string, unknown>): { redeemed: number[]; released: number[]; terminate: boolean } {
  const ids = (v: unknown) => (Array.isArray(v) ? v.flatMap((x) => (isObject(x) && typeof x['ticket'] === 'number' ? [x['ticket']] : [])) : []);
  return { redeemed: ids(r['redemptions']), released: ids(r['releases']), terminate: r['terminate'] !== undefined };
}

/** The referee members of a ruling: ticket id, quota figures, transition outcomes. */
type RefereeMembers = { ticket?: number; quota?: Record<string, string | number>; transitions?: { op: string; ok: boolean; ticket?: number; code?: string; message?: string }[]; panel?: PanelView };

function refereeOf(ruling: CanonicalObject | undefined): RefereeMembers {
  if (!ruling) return {};
  const out: RefereeMembers = {};
  const panel = panelOf(ruling);
  if (panel) out.panel = panel;
  const t = ruling['ticket'];
  if (isObject(t) && typeof t['id'] === 'number') out.ticket = t['id'];
  const q = ruling['quota'];
  if (isObject(q)) out.quota = q as Record<string, string | number>;
  const tr = ruling['transitions'];
  if (Array.isArray(tr)) {
    out.transitions = tr.flatMap((x) => {
      if (!isObject(x) || typeof x['op'] !== 'string' || typeof x['ok'] !== 'boolean') return [];
      const ticket = typeof x['ticket'] === 'number' ? x['ticket'] : undefined;
      const code = str(x['code']);
      const message = str(x['message']);
      return [{ op: x['op'], ok: x['ok'], ...(ticket === undefined ? {} : { ticket }), ...(code === undefined ? {} : { code }), ...(message === undefined ? {} : { message }) }];
    });
  }
  return out;
}

function rulingsOf(ruling: CanonicalObject | undefined): RulingView[] {
  if (!ruling) return [];
  const out: RulingView[] = [];
  for (const [by, v] of Object.entries(ruling)) {
    if (!isObject(v) || typeof v['admitted'] !== 'boolean') continue;
    const stage = str(v['stage']);
    const code = str(v['code']);
    const message = str(v['message']);
    const hash = str(v['intent_hash']);
    out.push({
      by,
      admitted: v['admitted'],
      ...(stage === undefined ? {} : { stage }),
      ...(code === undefined ? {} : { code }),
      ...(message === undefined ? {} : { message }),
      ...(hash === undefined ? {} : { intent_hash: hash }),
    });
  }
  return out;
}

/** Turns one verified entry into a row (`time` is the time of the last frame). */
export function rowOf(index: number, hash: string, entry: Entry, time: number): TimelineRow {
  switch (entry.kind) {
    case 'genesis': {
      const agents = isObject(entry.spec['agents']) ? Object.keys(entry.spec['agents']) : [];
      return { kind: 'genesis', index, sessionId: hash, name: entry.spec.name, agents, spec: entry.spec };
    }
    case 'frame': {
      const d = entry.data;
      const prices = isObject(d) ? pricesOf(d) : undefined;
      const fills = isObject(d) && Array.isArray(d['fills']) ? (d['fills'] as CanonicalObject[]) : undefined;
      const ns = isObject(d) ? notices(d['notices']) : undefined;
      const referee = isObject(d) && isObject(d['referee']) ? refereeReport(d['referee']) : undefined;
      return {
        kind: 'frame',
        index,
        ordinal: entry.ordinal,
        time: entry.time,
        ...(prices === undefined ? {} : { prices }),
        ...(fills === undefined ? {} : { fills }),
        ...(ns === undefined ? {} : { notices: ns }),
        ...(referee === undefined ? {} : { referee }),
        ...(d === undefined || prices !== undefined ? {} : { data: d }),
      };
    }
    case 'turn': {
      const rulings = rulingsOf(entry.ruling);
      const extra = refereeOf(entry.ruling);
      if (entry.body.kind === 'stand-down') return { kind: 'turn', index, ordinal: entry.ordinal, time, body: 'stand-down', failureClass: entry.body.failureClass, rulings, ...extra };
      const bytes = fromBase64(entry.body.bytes) ?? new Uint8Array();
      const carried = intentOfAuthored(bytes);
      if (!carried) {
        let text = decoder.decode(bytes);
        try {
          const v: unknown = JSON.parse(text);
          if (isObject(v) && typeof v['context'] === 'string') text = v['context'];
        } catch {
          // Not JSON: show the text as authored.
        }
        return { kind: 'turn', index, ordinal: entry.ordinal, time, body: 'note', text, rulings, ...extra };
      }
      const i = isObject(carried.intent) ? carried.intent : {};
      const f = (k: string) => str(i[k]);
      const fields = { agent: f('agent_id'), action: f('action'), market: f('market'), side: f('side'), size: f('size'), target: f('target_address'), text: str(carried.context) };
      const present = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Record<string, string>;
      return { kind: 'turn', index, ordinal: entry.ordinal, time, body: 'intent', ...present, rulings, ...extra };
    }
    case 'finalize': {
      const ns = entry.artifacts ? notices(entry.artifacts['notices']) : undefined;
      return {
        kind: 'seal',
        index,
        size: entry.size,
        root: entry.root,
        ...(entry.artifacts === undefined ? {} : { artifacts: entry.artifacts }),
        ...(ns === undefined ? {} : { notices: ns }),
      };
    }
  }
}

/** Counts rows one at a time (memory stays bounded however long the day). */
export class DayCounter {
  private entries = 0;
  private frames = 0;
  private turns = 0;
  private intents = 0;
  private admitted = 0;
  private rejected = 0;
  private notes = 0;
  private readonly admittedByAction: Record<string, number> = {};
  private readonly rejectedByCode: Record<string, number> = {};
  private readonly standDowns: Record<string, number> = {};
  private readonly notices: Record<string, number> = {};
  private readonly transitions: Record<string, number> = {};
  private readonly panels: Record<string, number> = {};
  private readonly judgeAnswers: Record<string, number> = {};
  private quota: Readonly<Record<string, string | number>> | undefined;

  /** Counts one row. */
  add(r: TimelineRow): void {
    const bump = (m: Record<string, number>, k: string, n = 1) => {
      if (n > 0) m[k] = (m[k] ?? 0) + n;
    };
    this.entries++;
    if (r.kind === 'frame') {
      this.frames++;
      for (const n of r.notices ?? []) bump(this.notices, n.outcome);
    } else if (r.kind === 'seal') {
      for (const n of r.notices ?? []) bump(this.notices, n.outcome);
    } else if (r.kind === 'turn') {
      this.turns++;
      if (r.quota) this.quota = r.quota;
      // The ruling lists every transition its frame carried, applied (`ok`) or refused: the
      // referee's own account, the same the demo's summary counts.
      for (const t of r.transitions ?? []) bump(this.transitions, t.ok ? t.op : (t.code ?? 'refused'));
      if (r.panel) {
        bump(this.panels, panelSplit(r.panel));
        for (const a of r.panel.answers) bump(this.judgeAnswers, a.outcome);
      }
      if (r.body === 'stand-down') bump(this.standDowns, r.failureClass ?? 'unknown');
      else if (r.body === 'note') this.notes++;
      else this.intents++;
      if (r.rulings.length === 0) return;
      const bad = r.rulings.filter((x) => !x.admitted);
      if (bad.length === 0) {
        this.admitted++;
        if (r.action !== undefined) bump(this.admittedByAction, r.action);
      } else {
        this.rejected++;
        for (const b of bad) bump(this.rejectedByCode, b.code ?? `${b.by}:rejected`);
      }
    }
  }

  /** The counts so far. */
  counts(): DayCounts {
    return {
      entries: this.entries,
      frames: this.frames,
      turns: this.turns,
      intents: this.intents,
      admitted: this.admitted,
      rejected: this.rejected,
      admittedByAction: { ...this.admittedByAction },
      rejectedByCode: { ...this.rejectedByCode },
      notes: this.notes,
      standDowns: { ...this.standDowns },
      notices: { ...this.notices },
      transitions: { ...this.transitions },
      panels: { ...this.panels },
      judgeAnswers: { ...this.judgeAnswers },
      ...(this.quota === undefined ? {} : { quota: this.quota }),
    };
  }
}

/** Counts over timeline rows. */
export function countRows(rows: readonly TimelineRow[]): DayCounts {
  const c = new DayCounter();
  for (const r of rows) c.add(r);
  return c.counts();
}

/**
 * Verifies a bundle file and builds its timeline in one streaming pass.
 * Rows stop at the first bad entry; `verdict` says why. With `keepRows:
 * false` only the counts are kept (bounded memory for long days).
 *
 * @example
 * const { rows, verdict, counts } = await readTimeline('tally-demo/bundle.jsonl');
 */
export async function readTimeline(
  path: string,
  options: { requireSealed?: boolean; pin?: ChainPin; onEntry?: (v: VerifiedEntry) => void; keepRows?: boolean } = {},
): Promise<Timeline> {
  const rows: TimelineRow[] = [];
  const counter = new DayCounter();
  const keep = options.keepRows ?? true;
  let time = 0;
  const verdict = await verifyBundleFile(path, {
    requireSealed: options.requireSealed ?? false,
    ...(options.pin === undefined ? {} : { pin: options.pin }),
    onEntry: (v) => {
      if (v.entry.kind === 'frame') time = v.entry.time;
      const row = rowOf(v.index, v.hash, v.entry, time);
      counter.add(row);
      if (keep) rows.push(row);
      options.onEntry?.(v);
    },
  });
  return { rows, verdict, counts: counter.counts() };
}
