/** Judge calls: one span each, latency by model and result, failures by kind. */
import { instruments } from './instruments.js';
import { ATTR, SPAN } from './names.js';
import { label } from './safe.js';
import { annotate, inSpan, tracing } from './spans.js';

/**
 * Runs one judge call in the `tally.referee.judge` span. A thrown call counts
 * as failure `error` (and is rethrown); an answer `{ok: false, failure}`
 * counts as that failure. The model id is an attribute only if it is a plain word.
 */
export function traceJudge<T extends { readonly ok: boolean; readonly failure?: string }>(model: string, ask: () => Promise<T>): Promise<T> {
  if (instruments() === undefined && !tracing()) return ask();
  const t0 = performance.now();
  const modelLabel = label(ATTR.model, model, 'other');
  return inSpan(SPAN.judge, { [ATTR.model]: modelLabel }, async (span) => {
    let failure: string | undefined = 'error';
    try {
      const a = await ask();
      failure = a.ok ? undefined : label(ATTR.failure, a.failure, 'error');
      return a;
    } finally {
      const m = instruments();
      m?.judgeDuration.record(performance.now() - t0, { model: modelLabel, result: failure === undefined ? 'ok' : 'failure' });
      if (failure !== undefined) {
        m?.judgeFailures.add(1, { model: modelLabel, failure });
        annotate(span, { [ATTR.failure]: failure });
      }
    }
  });
}
