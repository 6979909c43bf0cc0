/**
 * Span helpers over `@opentelemetry/api`. Without a registered SDK every
 * call is the API's no-op (a non-recording span, no context manager), so the
 * library pays a few allocations per verb and nothing else. Attributes pass
 * through {@link safeAttributes}; failures are recorded as an error kind (a
 * code), never as an exception message or stack.
 */
import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { TallyError } from '../protocol/index.js';
import { ATTR, SCOPE } from './names.js';
import { label, safeAttributes } from './safe.js';

/** A short, safe name for what went wrong: a Tally error code, else the error class name. */
export function errorKind(e: unknown): string {
  if (e instanceof TallyError) return label(ATTR.errorKind, e.code, 'TallyError');
  return e instanceof Error ? label(ATTR.errorKind, e.name, 'Error') : 'Thrown';
}

/** Sets the allowed ones of `attrs` on `span` (skipped entirely when the span is not recording). */
export function annotate(span: Span, attrs: Readonly<Record<string, unknown>>): void {
  if (span.isRecording()) span.setAttributes(safeAttributes(attrs));
}

/** The span active in the current context, if an SDK with a context manager is running. */
export function activeSpan(): Span | undefined {
  return trace.getActiveSpan();
}

/**
 * Runs `fn` inside a new active span `name` (a child of the active span),
 * ending it when `fn` settles; a throw marks the span as an error and rethrows.
 */
export function inSpan<T>(name: string, attrs: Readonly<Record<string, unknown>>, fn: (span: Span) => Promise<T>, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
  return trace.getTracer(SCOPE).startActiveSpan(name, { kind, attributes: safeAttributes(attrs) }, async (span) => {
    try {
      return await fn(span);
    } catch (e) {
      failed(span, e);
      throw e;
    } finally {
      span.end();
    }
  });
}

/** The synchronous form of {@link inSpan}. */
export function inSpanSync<T>(name: string, attrs: Readonly<Record<string, unknown>>, fn: (span: Span) => T): T {
  return trace.getTracer(SCOPE).startActiveSpan(name, { attributes: safeAttributes(attrs) }, (span) => {
    try {
      return fn(span);
    } catch (e) {
      failed(span, e);
      throw e;
    } finally {
      span.end();
    }
  });
}

function failed(span: Span, e: unknown): void {
  const kind = errorKind(e);
  span.setAttribute(ATTR.errorKind, kind);
  span.setStatus({ code: SpanStatusCode.ERROR, message: kind });
}
