/**
 * Store instrumentation: the compare-and-append span and latency, and the
 * group-commit batch size a store reports for the appends it committed.
 */
import type { Span } from '@opentelemetry/api';
import { instruments } from './instruments.js';
import { ATTR, SPAN } from './names.js';
import { annotate, errorKind, inSpan, tracing } from './spans.js';

/** Runs one compare-and-append in the `tally.store.append` span and records its latency by outcome. */
export function traceAppend<T extends { readonly ok: boolean; readonly reason?: string }>(append: () => Promise<T>): Promise<T> {
  const m = instruments();
  if (m === undefined && !tracing()) return append();
  const t0 = m === undefined ? 0 : performance.now();
  return inSpan(SPAN.append, {}, async (span) => {
    let outcome = 'error';
    try {
      const r = await append();
      outcome = r.ok ? 'ok' : (r.reason ?? 'refused');
      annotate(span, { [ATTR.storeOutcome]: outcome });
      return r;
    } catch (e) {
      const kind = errorKind(e);
      if (kind.startsWith('TALLY_STORE')) m?.storeErrors.add(1, { kind });
      throw e;
    } finally {
      m?.appendDuration.record(performance.now() - t0, { outcome });
    }
  });
}

/**
 * A store reports a committed batch: its size goes to the batch histogram and
 * onto each append's span (captured with {@link activeSpan} when it was queued).
 */
export function recordBatch(size: number, spans: readonly (Span | undefined)[]): void {
  instruments()?.batchSize.record(size);
  for (const s of spans) if (s !== undefined) annotate(s, { [ATTR.batch]: size });
}
