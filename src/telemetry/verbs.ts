/**
 * The engine's verbs and the bundle verifier, traced and counted. The session
 * controller stays free of instrumentation: {@link traceVerbs} wraps its verb
 * methods once, where the class is defined.
 */
import type { Span } from '@opentelemetry/api';
import { instruments } from './instruments.js';
import { ATTR, SPAN, type Verb } from './names.js';
import { turnOutcome, verbAttributes } from './outcome.js';
import { annotate, errorKind, inSpan, tracing } from './spans.js';

/** Runs one verb call in its span and records its metrics. `input` is the verb's first argument. */
export function traceVerb<T>(verb: Verb, input: unknown, run: () => Promise<T>): Promise<T> {
  const m = instruments();
  // Nothing registered: the call itself and nothing else (npm run bench, section telemetry).
  if (m === undefined && !tracing()) return run();
  const t0 = m === undefined ? 0 : performance.now();
  return inSpan(SPAN.verb(verb), { [ATTR.verb]: verb }, async (span: Span) => {
    let result: T;
    try {
      result = await run();
    } catch (e) {
      if (m !== undefined) {
        const kind = errorKind(e);
        if (kind.startsWith('TALLY_STORE')) m.storeErrors.add(1, { kind });
        m.verbDuration.record(performance.now() - t0, { verb, result: 'error' });
      }
      throw e;
    }
    const r = result as { ok?: unknown; created?: unknown; duplicate?: unknown };
    const o = verb === 'turn' ? turnOutcome(result) : undefined;
    if (m !== undefined) {
      m.verbDuration.record(performance.now() - t0, { verb, result: r.ok === true ? 'ok' : 'refused' });
      if (o !== undefined) m.turns.add(1, { outcome: o.outcome, code: o.code });
      else if (verb === 'open' && r.ok === true && r.created === true) m.sessionsOpened.add(1);
      else if (verb === 'finalize' && r.ok === true && r.duplicate === false) m.sessionsSealed.add(1);
    }
    if (span.isRecording()) annotate(span, { ...verbAttributes(input, result), ...(o === undefined ? {} : { [ATTR.outcome]: o.outcome }) });
    return result;
  });
}

/**
 * Wraps the named async methods of `proto` in {@link traceVerb}. Call once,
 * next to the class definition.
 *
 * @example
 * traceVerbs(Engine.prototype, ['open', 'frame', 'turn', 'finalize', 'events', 'describe']);
 */
export function traceVerbs(proto: object, verbs: readonly Verb[]): void {
  const target = proto as Record<string, unknown>;
  for (const verb of verbs) {
    const original = target[verb];
    if (typeof original !== 'function') throw new TypeError(`traceVerbs: ${verb} is not a method`);
    const fn = original as (this: unknown, ...args: unknown[]) => Promise<unknown>;
    Object.defineProperty(target, verb, {
      configurable: true,
      writable: true,
      value: function traced(this: unknown, ...args: unknown[]): Promise<unknown> {
        return traceVerb(verb, args[0], () => fn.apply(this, args));
      },
    });
  }
}

/** A verification result as the codec returns it. */
type Verified = { readonly ok: true; readonly size: number } | { readonly ok: false; readonly index: number; readonly code: string };

/** Runs a bundle verification in the `tally.verify` span; counts entries and entries per second. */
export async function traceVerify<T extends Verified>(run: () => Promise<T>): Promise<T> {
  if (instruments() === undefined && !tracing()) return run();
  const t0 = performance.now();
  return inSpan(SPAN.verb('verify'), { [ATTR.verb]: 'verify' }, async (span) => {
    const r = await run();
    const entries = r.ok ? r.size : r.index;
    const seconds = (performance.now() - t0) / 1000;
    const m = instruments();
    m?.verifyEntries.add(entries, { result: r.ok ? 'ok' : 'failed' });
    if (entries > 0 && seconds > 0) m?.verifyRate.record(entries / seconds);
    annotate(span, { [ATTR.entries]: entries, ...(r.ok ? {} : { [ATTR.diagnostic]: r.code }) });
    return r;
  });
}
