/**
 * What changed between a recorded value and the one replay re-derived, field
 * by field: `ruling.quota.cap: recorded "999999", re-derived "146"` instead of
 * two walls of JSON. Pure; both sides are canonical JSON values (the parsed
 * entries), compared leaf by leaf in canonical key order.
 */
import { canonicalJson, type CanonicalObject, type CanonicalValue } from '../../protocol/index.js';

/**
 * One field that differs. `path` names it from the entry (`ruling.quota.cap`,
 * `ruling.transitions[0].ok`, `data["odd key"]`); `recorded` / `rederived`
 * are absent when that side has no such field.
 */
export interface FieldChange {
  readonly path: string;
  readonly recorded?: CanonicalValue;
  readonly rederived?: CanonicalValue;
}

/** At most this many changes are listed per divergence (`fieldChanges`'s default). */
export const FIELD_CHANGES_MAX = 50;

const isObject = (v: CanonicalValue | undefined): v is CanonicalObject => typeof v === 'object' && !Array.isArray(v);
const step = (path: string, key: string): string => (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key) ? (path === '' ? key : `${path}.${key}`) : `${path}[${JSON.stringify(key)}]`);

/**
 * The fields where `recorded` and `rederived` differ, under `path`, in
 * canonical order (keys sorted by UTF-16 code units, as canonical JSON sorts
 * them; array elements by index), at most `max`. Objects and arrays are
 * descended into; any other difference (a type, a scalar) is one change.
 *
 * @example
 * fieldChanges({ quota: { cap: '999999', used: '1' } }, { quota: { cap: '146', used: '1' } }, 'ruling')
 * // [{ path: 'ruling.quota.cap', recorded: '999999', rederived: '146' }]
 */
export function fieldChanges(recorded: CanonicalValue | undefined, rederived: CanonicalValue | undefined, path = '', max = FIELD_CHANGES_MAX): FieldChange[] {
  const out: FieldChange[] = [];
  const walk = (a: CanonicalValue | undefined, b: CanonicalValue | undefined, at: string): void => {
    if (out.length >= max) return;
    if (isObject(a) && isObject(b)) {
      const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
      for (const k of keys) walk(Object.hasOwn(a, k) ? a[k] : undefined, Object.hasOwn(b, k) ? b[k] : undefined, step(at, k));
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.max(a.length, b.length); i++) walk(a[i], b[i], `${at}[${i}]`);
      return;
    }
    if (a === undefined && b === undefined) return;
    if (a !== undefined && b !== undefined && canonicalJson(a) === canonicalJson(b)) return;
    out.push({ path: at === '' ? '(the value)' : at, ...(a === undefined ? {} : { recorded: a }), ...(b === undefined ? {} : { rederived: b }) });
  };
  walk(recorded, rederived, path);
  return out;
}

/** One value of a change as text: canonical JSON cut at `cut` characters, or `(absent)`. */
export function changeValueText(v: CanonicalValue | undefined, cut = 120): string {
  if (v === undefined) return '(absent)';
  const t = canonicalJson(v);
  return t.length > cut ? `${t.slice(0, cut)}…` : t;
}

/** `ruling.quota.cap: recorded "999999", re-derived "146"`. */
export function changeLine(c: FieldChange): string {
  return `${c.path}: recorded ${changeValueText(c.recorded)}, re-derived ${changeValueText(c.rederived)}`;
}
