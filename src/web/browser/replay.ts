/**
 * Replay in the page: the worker re-derives every ruling of the verified day
 * with `replay` — the very function `tally replay` runs — and the ruler the CLI
 * would choose (`chooseReplayRuler`: the x402 payment referee over the referee
 * when the spec seals a payment policy, the referee when it seals a mandate,
 * the AP2 ruler for an AP2 mandate or a Verifiable Intent credential, else the
 * intent ruler). Judge verdicts are re-verified from their recorded
 * signatures, never re-asked; credentials and receipts are re-verified from
 * their recorded bytes. A fact from another session (a nonce first used
 * there, an AP2 mandate's use or receipt reserved there) cannot be re-derived
 * from one bundle and is listed as trusted, in `tally replay`'s words.
 */
import { canonicalJson, type CanonicalValue } from '../../protocol/index.js';
import { changeValueText } from '../../receipt/replay/diff.js';
import { externalFactText } from '../../receipt/replay/fact-text.js';
import { replayInMemory } from '../../receipt/replay/replay.js';
import { chooseReplayRuler, type SealedAuthority } from '../../payments/replay-ruler.js';
import type { ReplayReport } from './messages.js';

const cut = (v: CanonicalValue | undefined): string | undefined => {
  if (v === undefined) return undefined;
  const t = canonicalJson(v);
  return t.length > 2000 ? `${t.slice(0, 2000)}…` : t;
};

/** Replays `bundle` (already verified) and reports what the page shows. */
export async function replayDay(bundle: Blob, authority: SealedAuthority, requireSealed: boolean, onEntry: (index: number) => void): Promise<ReplayReport> {
  const chosen = chooseReplayRuler('auto', authority);
  const reader = bundle.stream().getReader();
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  }
  const r = await replayInMemory(chunks(), { ruler: chosen.ruler, requireSealed, onEntry });
  const facts = !r.ok && r.stage === 'chain' ? [] : r.externalFacts.map((f) => ({ index: f.index, text: `${externalFactText(f)} (trusted, not verified)` }));
  if (r.ok) return { state: 'replayed', ruler: chosen.name, turns: r.turns, rulings: r.rulings, divergences: [], facts };
  if (r.stage === 'chain') return { state: 'chain', ruler: chosen.name, turns: 0, rulings: 0, divergences: [], facts, chain: { index: r.index, code: r.code, message: r.message } };
  return {
    state: 'diverged',
    ruler: chosen.name,
    turns: 0,
    rulings: 0,
    facts,
    ...(r.stoppedAt === undefined ? {} : { stoppedAt: r.stoppedAt }),
    divergences: r.divergences.map((d) => ({
      index: d.index,
      kind: d.kind,
      message: d.message,
      changes: d.kind === 'rejected' ? [] : d.changes.map((c) => ({ path: c.path, recorded: changeValueText(c.recorded), rederived: changeValueText(c.rederived) })),
      ...(d.kind === 'ruling-diverged' ? { recorded: cut(d.recorded) ?? '(none)', rederived: cut(d.rederived) ?? '(none)' } : d.kind === 'entry-diverged' ? { recorded: cut(d.recorded as unknown as CanonicalValue)!, rederived: cut(d.rederived as unknown as CanonicalValue)! } : { rederived: d.actual.message }),
    })),
  };
}
