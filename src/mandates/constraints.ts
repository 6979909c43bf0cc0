/**
 * AP2 open-mandate constraints, parsed strictly and evaluated against a closed
 * payment or checkout mandate and the mandate's derived history. Unknown
 * constraint types fail closed (AP2: "MUST reject"); types AP2 defines that
 * Tally does not enforce yet fail closed too, under their own code.
 */
import { refuse, type MandateResult } from './codes.js';
import { minorUnits, currencyExponent } from './currency.js';
import { bucketOf, type Frequency, FREQUENCIES } from './buckets.js';

export interface Merchant { readonly id: string; readonly name: string; readonly website?: string }
export interface LineItemRequirement { readonly id: string; readonly acceptable: readonly string[]; readonly quantity: number }

export type Constraint =
  | { readonly type: 'payment.allowed_payees'; readonly allowed: readonly Merchant[] }
  | { readonly type: 'payment.amount_range'; readonly currency: string; readonly max: number; readonly min?: number }
  | { readonly type: 'payment.budget'; readonly currency: string; readonly maxMinor: number }
  | { readonly type: 'payment.agent_recurrence'; readonly frequency: Frequency; readonly maxOccurrences?: number }
  | { readonly type: 'payment.execution_date'; readonly notBefore?: string; readonly notAfter?: string }
  | { readonly type: 'payment.reference'; readonly conditionalTransactionId: string }
  | { readonly type: 'checkout.allowed_merchants'; readonly allowed: readonly Merchant[] }
  | { readonly type: 'checkout.line_items'; readonly items: readonly LineItemRequirement[] };

const PAYMENT = new Set(['payment.allowed_payees', 'payment.amount_range', 'payment.budget', 'payment.agent_recurrence', 'payment.execution_date', 'payment.reference']);
const CHECKOUT = new Set(['checkout.allowed_merchants', 'checkout.line_items']);
/** Defined by AP2 v0.2 but not enforced here: refused, never ignored. */
const UNSUPPORTED = new Set(['payment.allowed_payment_instruments', 'payment.allowed_pisps']);
const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const bad = (m: string) => refuse('constraint-malformed', m);

function only(o: Record<string, unknown>, keys: readonly string[]): boolean {
  return Object.keys(o).every((k) => keys.includes(k));
}
const int = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

function merchant(v: unknown): Merchant | undefined {
  if (!isObject(v) || !only(v, ['id', 'name', 'website']) || typeof v.id !== 'string' || typeof v.name !== 'string') return undefined;
  if (v.website !== undefined && typeof v.website !== 'string') return undefined;
  return v.website === undefined ? { id: v.id, name: v.name } : { id: v.id, name: v.name, website: v.website };
}
function merchants(v: unknown): Merchant[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out = v.map(merchant);
  return out.every((m) => m !== undefined) ? (out as Merchant[]) : undefined;
}

function parseOne(c: unknown, kind: 'payment' | 'checkout'): MandateResult<Constraint> {
  if (!isObject(c) || typeof c.type !== 'string') return bad('a constraint must be an object with a string type');
  const t = c.type;
  if (UNSUPPORTED.has(t)) return refuse('constraint-unsupported', `${t} is an AP2 constraint Tally does not enforce; the mandate is refused rather than the constraint ignored`);
  if (!(kind === 'payment' ? PAYMENT : CHECKOUT).has(t)) return refuse('constraint-unknown', `unknown constraint ${JSON.stringify(t)} in an open ${kind} mandate`);
  switch (t) {
    case 'payment.allowed_payees':
    case 'checkout.allowed_merchants': {
      const allowed = merchants(c.allowed);
      if (!only(c, ['type', 'allowed']) || !allowed) return bad(`${t}: {type, allowed: Merchant[]}`);
      return { ok: true, value: { type: t, allowed } };
    }
    case 'payment.amount_range': {
      if (!only(c, ['type', 'currency', 'max', 'min']) || typeof c.currency !== 'string' || !int(c.max) || (c.min !== undefined && !int(c.min))) return bad(`${t}: {type, currency, max: integer minor units, min?}`);
      if (currencyExponent(c.currency) === undefined) return refuse('currency-unknown', `${c.currency} is not in the ISO 4217 table`);
      return { ok: true, value: c.min === undefined ? { type: t, currency: c.currency, max: c.max } : { type: t, currency: c.currency, max: c.max, min: c.min } };
    }
    case 'payment.budget': {
      if (!only(c, ['type', 'currency', 'max']) || typeof c.currency !== 'string' || typeof c.max !== 'number') return bad(`${t}: {type, currency, max: number}`);
      const m = minorUnits(c.max, c.currency);
      if (!m.ok) return m;
      return { ok: true, value: { type: t, currency: c.currency, maxMinor: m.value } };
    }
    case 'payment.agent_recurrence': {
      if (!only(c, ['type', 'frequency', 'max_occurrences']) || !FREQUENCIES.includes(c.frequency as Frequency) || (c.max_occurrences !== undefined && !int(c.max_occurrences))) return bad(`${t}: {type, frequency, max_occurrences?}`);
      const f = c.frequency as Frequency;
      return { ok: true, value: c.max_occurrences === undefined ? { type: t, frequency: f } : { type: t, frequency: f, maxOccurrences: c.max_occurrences as number } };
    }
    case 'payment.execution_date': {
      const nb = c.not_before, na = c.not_after;
      if (!only(c, ['type', 'not_before', 'not_after']) || (nb !== undefined && !(typeof nb === 'string' && DATE.test(nb))) || (na !== undefined && !(typeof na === 'string' && DATE.test(na)))) return bad(`${t}: {type, not_before?: YYYY-MM-DD, not_after?: YYYY-MM-DD}`);
      return { ok: true, value: { type: t, ...(nb === undefined ? {} : { notBefore: nb as string }), ...(na === undefined ? {} : { notAfter: na as string }) } };
    }
    case 'payment.reference': {
      if (!only(c, ['type', 'conditional_transaction_id']) || typeof c.conditional_transaction_id !== 'string') return bad(`${t}: {type, conditional_transaction_id}`);
      return { ok: true, value: { type: t, conditionalTransactionId: c.conditional_transaction_id } };
    }
    default: {
      // checkout.line_items
      if (!only(c, ['type', 'items']) || !Array.isArray(c.items) || c.items.length === 0) return bad(`${t}: {type, items: [≥1]}`);
      const items: LineItemRequirement[] = [];
      for (const r of c.items) {
        if (!isObject(r) || !only(r, ['id', 'acceptable_items', 'quantity']) || typeof r.id !== 'string' || !int(r.quantity) || r.quantity === 0 || !Array.isArray(r.acceptable_items)) return bad(`${t}: a requirement is {id, acceptable_items, quantity > 0}`);
        const acc: string[] = [];
        for (const a of r.acceptable_items) {
          if (!isObject(a) || !only(a, ['id', 'title']) || typeof a.id !== 'string' || typeof a.title !== 'string') return bad(`${t}: an acceptable item is {id, title}`);
          acc.push(a.id);
        }
        items.push({ id: r.id, acceptable: acc, quantity: r.quantity });
      }
      const all = items.flatMap((i) => i.acceptable);
      if (new Set(all).size !== all.length) return refuse('constraint-unsupported', 'checkout.line_items whose requirements share an acceptable item need max-flow matching, which Tally does not do; refused');
      return { ok: true, value: { type: 'checkout.line_items', items } };
    }
  }
}

/**
 * Parses the `constraints` claim of an open mandate; the one AP2 requires
 * (`payment.reference`, `checkout.line_items`) must be there unless
 * `required` is false (a VI checkout mandate, which need not carry line items).
 */
export function parseConstraints(v: unknown, kind: 'payment' | 'checkout', required = true): MandateResult<Constraint[]> {
  if (!Array.isArray(v)) return bad('constraints must be an array');
  const out: Constraint[] = [];
  for (const c of v) {
    const r = parseOne(c, kind);
    if (!r.ok) return r;
    out.push(r.value);
  }
  const must = kind === 'payment' ? 'payment.reference' : 'checkout.line_items';
  if (required && !out.some((c) => c.type === must)) return refuse('constraint-missing', `an open ${kind} mandate must carry ${must}`);
  return { ok: true, value: out };
}

/** What a closed payment mandate asks for, as the referee reads it. */
export interface PaymentRequest {
  readonly payee: Merchant;
  readonly amount: number;
  readonly currency: string;
  /** YYYY-MM-DD; absent means the frame's own UTC date. */
  readonly executionDate?: string;
  /** Digest of the open checkout mandate the payment is conditional on. */
  readonly openCheckoutHash?: string;
}

/**
 * The history of one open mandate, derived from the store (never supplied by
 * the agent): AP2's MandateContext. `spent` is in the budget's currency.
 */
export interface MandateHistory {
  readonly spent: number;
  readonly uses: number;
  /** Unix seconds of the latest admitted use, if any. */
  readonly lastUse?: number;
}

/** One violated constraint: its type and why. */
export interface Violation { readonly constraint: Constraint['type']; readonly reason: string }

const sameMerchant = (a: Merchant, b: Merchant): boolean => a.id === b.id;

/** UTC calendar date of Unix seconds, YYYY-MM-DD. */
export function utcDate(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

/** Every constraint the payment breaks (empty: admissible), given history and frame time (Unix seconds). */
export function evaluatePayment(constraints: readonly Constraint[], req: PaymentRequest, history: MandateHistory, now: number): Violation[] {
  const v: Violation[] = [];
  for (const c of constraints) {
    switch (c.type) {
      case 'payment.allowed_payees':
        if (!c.allowed.some((m) => sameMerchant(m, req.payee))) v.push({ constraint: c.type, reason: `payee ${req.payee.id} is not allowed` });
        break;
      case 'payment.amount_range':
        if (req.currency !== c.currency) v.push({ constraint: c.type, reason: `currency ${req.currency} is not ${c.currency}` });
        else if (req.amount > c.max || (c.min !== undefined && req.amount < c.min)) v.push({ constraint: c.type, reason: `amount ${req.amount} outside [${c.min ?? 0}, ${c.max}]` });
        break;
      case 'payment.budget':
        if (req.currency !== c.currency) v.push({ constraint: c.type, reason: `currency ${req.currency} is not the budget's ${c.currency}` });
        else if (history.spent + req.amount > c.maxMinor) v.push({ constraint: c.type, reason: `spent ${history.spent} + ${req.amount} exceeds the budget ${c.maxMinor}` });
        break;
      case 'payment.agent_recurrence':
        if (c.maxOccurrences !== undefined && history.uses >= c.maxOccurrences) v.push({ constraint: c.type, reason: `${history.uses} uses reach max_occurrences ${c.maxOccurrences}` });
        else if (c.frequency !== 'ON_DEMAND' && history.lastUse !== undefined && bucketOf(c.frequency, history.lastUse) === bucketOf(c.frequency, now)) v.push({ constraint: c.type, reason: `already used in ${bucketOf(c.frequency, now)}` });
        break;
      case 'payment.execution_date': {
        const d = req.executionDate ?? utcDate(now);
        if ((c.notBefore !== undefined && d < c.notBefore) || (c.notAfter !== undefined && d > c.notAfter)) v.push({ constraint: c.type, reason: `execution date ${d} outside [${c.notBefore ?? '…'}, ${c.notAfter ?? '…'}]` });
        break;
      }
      case 'payment.reference':
        if (req.openCheckoutHash !== c.conditionalTransactionId) v.push({ constraint: c.type, reason: 'the payment is not conditional on the referenced open checkout mandate' });
        break;
      default:
        v.push({ constraint: c.type, reason: 'a checkout constraint in a payment mandate' });
    }
  }
  return v;
}

/** What a closed checkout mandate asks for. */
export interface CheckoutRequest {
  readonly merchant: Merchant;
  readonly lineItems: readonly { readonly id: string; readonly quantity: number }[];
}

/** Every constraint the checkout breaks (empty: admissible). */
export function evaluateCheckout(constraints: readonly Constraint[], req: CheckoutRequest): Violation[] {
  const v: Violation[] = [];
  for (const c of constraints) {
    if (c.type === 'checkout.allowed_merchants') {
      if (!c.allowed.some((m) => sameMerchant(m, req.merchant))) v.push({ constraint: c.type, reason: `merchant ${req.merchant.id} is not allowed` });
    } else if (c.type === 'checkout.line_items') {
      const qty = new Map<string, number>();
      for (const li of req.lineItems) qty.set(li.id, (qty.get(li.id) ?? 0) + li.quantity);
      const covered = new Set(c.items.flatMap((i) => i.acceptable));
      for (const r of c.items) {
        const got = r.acceptable.reduce((s, id) => s + (qty.get(id) ?? 0), 0);
        if (got !== r.quantity) v.push({ constraint: c.type, reason: `requirement ${r.id} wants ${r.quantity}, the cart has ${got}` });
      }
      for (const id of qty.keys()) if (!covered.has(id)) v.push({ constraint: c.type, reason: `item ${id} is in no requirement` });
    } else v.push({ constraint: c.type, reason: 'a payment constraint in a checkout mandate' });
  }
  return v;
}
