/**
 * How a verb's result is labelled: its attributes (session, ordinal, entry
 * index, duplicate, ruling code or diagnostic) and, for turns, the outcome
 * the `tally.turns` counter is split by. Values are read from the engine's
 * own result; the caller's input is used only for the ordinal, and for the
 * session id only when the engine did not refuse it as unknown or malformed.
 */
import { ATTR, type TurnOutcome } from './names.js';
import { label } from './safe.js';


// `tool`: the MCP gateway's tool-call ruling (docs/PROTOCOL.md §18).
const RULING_STAGES = ['intent', 'policy', 'verdict', 'tool'] as const;

/**
 * A ruling's label: the code of the first stage that refused, `admitted` when
 * every stage present admitted, `ruled` when no stage was ruled (transitions only).
 */
export function rulingLabel(ruling: unknown): { readonly outcome: 'admitted' | 'refused' | 'ruled'; readonly code: string } {
  if (typeof ruling !== 'object' || ruling === null) return { outcome: 'ruled', code: 'none' };
  let admitted = false;
  for (const stage of RULING_STAGES) {
    const s = (ruling as Record<string, unknown>)[stage];
    if (typeof s !== 'object' || s === null) continue;
    const r = s as Record<string, unknown>;
    if (r['admitted'] === false) return { outcome: 'refused', code: label(ATTR.ruling, r['code'], 'rejected') };
    if (r['admitted'] === true) admitted = true;
  }
  return admitted ? { outcome: 'admitted', code: 'admitted' } : { outcome: 'ruled', code: 'none' };
}

/** The outcome and code of a `turn` result, as counted in `tally.turns`. */
export function turnOutcome(result: unknown): { readonly outcome: TurnOutcome; readonly code: string } {
  const r = asRecord(result);
  if (r['ok'] !== true) return { outcome: 'diagnostic', code: label(ATTR.diagnostic, r['diagnostic'], 'unknown') };
  if (r['duplicate'] === true) return { outcome: 'duplicate', code: 'duplicate' };
  if (r['ruling'] === undefined) return { outcome: 'recorded', code: 'none' };
  return rulingLabel(r['ruling']);
}

/** Span attributes of a verb call (unchecked here: {@link annotate} filters them). */
export function verbAttributes(input: unknown, result: unknown): Record<string, unknown> {
  const r = asRecord(result);
  const out: Record<string, unknown> = {};
  const receipt = asRecord(r['receipt']);
  if (r['ok'] === true) {
    out[ATTR.session] = r['sessionId'] ?? receipt['sessionId'];
    out[ATTR.index] = r['index'] ?? (typeof receipt['size'] === 'number' ? receipt['size'] - 1 : undefined);
    out[ATTR.ordinal] = r['ordinal'];
    out[ATTR.duplicate] = r['duplicate'];
    if (r['ruling'] !== undefined) out[ATTR.ruling] = rulingLabel(r['ruling']).code;
  } else {
    out[ATTR.diagnostic] = r['diagnostic'];
    const known = r['diagnostic'] !== 'wrong-session' && r['diagnostic'] !== 'malformed-entry';
    const i = asRecord(input);
    if (known) out[ATTR.session] = typeof input === 'string' ? input : i['sessionId'];
    out[ATTR.ordinal] = i['ordinal'];
  }
  return out;
}

function asRecord(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
}
