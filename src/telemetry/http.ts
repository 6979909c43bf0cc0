/**
 * The server span of one HTTP request, continuing the caller's trace: a W3C
 * `traceparent` header is extracted through the propagation API, so an agent
 * harness's trace goes on into Tally (its `tracestate` is not: free text that
 * the span would carry to every exporter). Only the
 * route template is recorded (session ids become `{id}`), never the query,
 * headers or body.
 */
import { ROOT_CONTEXT, SpanKind, context, propagation } from '@opentelemetry/api';
import { ATTR } from './names.js';
import { allowed, label } from './safe.js';
import { annotate, inSpan, tracing } from './spans.js';

const SEGMENTS = new Set(['rpc', 'healthz', 'readyz', 'metrics', 'verifier-key', 'sessions', 'describe', 'events', 'bundle', 'receipt', 'proof', 'checkpoint', 'turn-receipt', 'consistency']);

/** `/sessions/ab12…/proof` → `/sessions/{id}/proof`: known words stay, anything else becomes `{id}`. */
export function routeOf(path: string): string {
  const route = path.split('/', 8).map((s) => (s === '' || SEGMENTS.has(s) ? s : '{id}')).join('/');
  return allowed(ATTR.route, route) ? route : '/{other}';
}

/**
 * Runs `handle` in a server span named `<METHOD> <route>`, a child of the
 * trace in `headers` when they carry one; `status` is read when it settles.
 */
export function traceRequest(headers: Readonly<Record<string, string | string[] | undefined>>, method: string | undefined, path: string, handle: () => Promise<void>, status: () => number): Promise<void> {
  if (!tracing()) return handle();
  // `tracestate` is free text (a caller may put a token in it) that a span would carry to every exporter: not taken.
  const parent = propagation.extract(ROOT_CONTEXT, { ...headers, tracestate: undefined });
  const m = label(ATTR.method, method, 'OTHER');
  const route = routeOf(path);
  return context.with(parent, () =>
    inSpan(`${m} ${route}`, { [ATTR.method]: m, [ATTR.route]: route }, async (span) => {
      try {
        await handle();
      } finally {
        annotate(span, { [ATTR.status]: status() });
      }
    }, SpanKind.SERVER),
  );
}
