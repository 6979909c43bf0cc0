/**
 * Span helpers over `@opentelemetry/api`. Without a registered SDK every
 * call is the API's no-op (a non-recording span, no context manager), so the
 * library pays a few allocations per verb and nothing else. Attributes pass
 * through {@link safeAttributes}; failures are recorded as an error kind (a
 * code), never as an exception message or stack.
 */
import { INVALID_SPAN_CONTEXT, ProxyTracerProvider, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { TallyError } from '../protocol/index.js';
import { ATTR, SCOPE } from './names.js';
import { label, safeAttributes } from './safe.js';

/** The API's own no-op provider (what a proxy delegates to while no SDK is registered). */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();
/** The span handed to callbacks while nothing is traced: not recording, so {@link annotate} skips it. */
const IDLE: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Our tracer, or `undefined` while no SDK tracer provider is registered: then
 * the span helpers skip the API's no-op span and context work altogether
 * (measured by `npm run bench`, section telemetry).
 */
function tracer(): Tracer | undefined {
  const p = trace.getTracerProvider();
  if (p instanceof ProxyTracerProvider && p.getDelegate() === NOOP_PROVIDER) return undefined;
  return p.getTracer(SCOPE);
}

/** True while an SDK tracer provider is registered. */
export function tracing(): boolean {
  return tracer() !== undefined;
}

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
  const t = tracer();
  if (t === undefined) return fn(IDLE);
  return t.startActiveSpan(name, { kind, attributes: safeAttributes(attrs) }, async (span) => {
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
  const t = tracer();
  if (t === undefined) return fn(IDLE);
  return t.startActiveSpan(name, { attributes: safeAttributes(attrs) }, (span) => {
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
