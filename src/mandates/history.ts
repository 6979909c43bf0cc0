/**
 * An open mandate's history, derived from the store (PROTOCOL.md §16.6): use
 * `n` of mandate `M` is the reservation (`ap2:<M>`, `use:<n>`), owned by the
 * turn that spent it, whose ruling records what the use was. Live and for the
 * day's own entries the owner's ruling is read from the store; on replay a
 * use by another session is taken from the recorded ruling's `external` list.
 */
import { parseEntry, TallyError, type CanonicalObject } from '../protocol/index.js';
import type { NonceOwner, TranscriptStore } from '../store/index.js';
import type { RuleContext } from '../session/index.js';

/**
 * One earlier use, as a ruling records it; `reference` is what a receipt for
 * it names (§16.8). `amount` is a payment's (absent for a checkout).
 */
export interface Use { readonly use: number; readonly session: string; readonly index: number; readonly amount?: number; readonly at: number; readonly reference: string }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The `ap2` member of the ruling of entry `index` of `session`, or undefined. */
export async function rulingAt(store: TranscriptStore, session: string, index: number): Promise<Record<string, unknown> | undefined> {
  const rows = await store.readRange(session, index, index + 1);
  const parsed = rows[0] ? parseEntry(JSON.parse(new TextDecoder().decode(rows[0].bytes))) : undefined;
  const a = parsed?.ok && parsed.entry.kind === 'turn' ? parsed.entry.ruling?.['ap2'] : undefined;
  return isObject(a) ? a : undefined;
}

/** Uses recorded as external (other sessions') in a ruling. */
export function recordedExternal(recorded: CanonicalObject | undefined): Use[] {
  const a = recorded?.['ap2'];
  const ext = isObject(a) && Array.isArray(a['external']) ? a['external'] : [];
  return ext.filter(isObject).map((u) => u as unknown as Use);
}

async function useOf(store: TranscriptStore, ctx: RuleContext, n: number, owner: NonceOwner, kind: 'payment' | 'checkout'): Promise<Use> {
  if (ctx.recorded !== undefined && owner.sessionId !== ctx.sessionId) {
    const u = recordedExternal(ctx.recorded).find((x) => x.use === n);
    if (!u) throw new TallyError('TALLY_AP2_HISTORY', 'The recorded ruling names no external use the replay needs.', { details: `use ${n}` });
    return u;
  }
  const a = await rulingAt(store, owner.sessionId, owner.index);
  const amountOk = kind === 'payment' ? typeof a?.['amount'] === 'number' : a?.['amount'] === undefined;
  if (!a || a['use'] !== n || !amountOk || typeof a['at'] !== 'number' || typeof a['reference'] !== 'string') {
    throw new TallyError('TALLY_AP2_HISTORY', 'A reservation of a mandate use names no spending turn.', { details: `${owner.sessionId}#${owner.index} use ${n}` });
  }
  const base = { use: n, session: owner.sessionId, index: owner.index };
  return kind === 'payment' ? { ...base, amount: a['amount'] as number, at: a['at'], reference: a['reference'] } : { ...base, at: a['at'], reference: a['reference'] };
}

/** Every use 0..n-1 of the mandate whose history key is `key`, in any session of the store. */
export async function readUses(store: TranscriptStore, ctx: RuleContext, key: string, kind: 'payment' | 'checkout'): Promise<Use[]> {
  const uses: Use[] = [];
  for (;;) {
    const owner = await ctx.nonceOwner(key, `use:${uses.length}`);
    if (!owner) return uses;
    uses.push(await useOf(store, ctx, uses.length, owner, kind));
  }
}
