/**
 * A real OpenTelemetry SDK for tests: spans go to the SDK's in-memory
 * exporter, metrics are collected on demand from a MeterProvider. Each
 * {@link installSdk} registers fresh global providers (so counts start at 0).
 */
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';

class OnDemandReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** A counter's or histogram's points: attributes and value. */
export interface Point {
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly value: number | Histogram;
}

export interface TestSdk {
  readonly exporter: InMemorySpanExporter;
  spans(): ReadableSpan[];
  /** Points of metric `name` (empty when nothing was recorded). */
  points(name: string): Promise<Point[]>;
  /** Sum of a counter's points whose attributes include `match`. */
  sum(name: string, match?: Record<string, unknown>): Promise<number>;
  /** Everything collected, as JSON (for secret scans). */
  allMetricsJson(): Promise<string>;
  shutdown(): Promise<void>;
}

export function installSdk(): TestSdk {
  metrics.disable();
  trace.disable();
  propagation.disable();
  context.disable();
  const exporter = new InMemorySpanExporter();
  const tracer = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  tracer.register();
  const reader = new OnDemandReader();
  const meter = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meter);
  const collect = async () => (await reader.collect()).resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
  const points = async (name: string): Promise<Point[]> =>
    (await collect()).filter((m) => m.descriptor.name === name).flatMap((m) => (m.dataPoints as DataPoint<number | Histogram>[]).map((p) => ({ attributes: p.attributes, value: p.value })));
  return {
    exporter,
    spans: () => exporter.getFinishedSpans(),
    points,
    async sum(name, match = {}) {
      let total = 0;
      for (const p of await points(name)) {
        if (Object.entries(match).every(([k, v]) => p.attributes[k] === v)) total += typeof p.value === 'number' ? p.value : p.value.count;
      }
      return total;
    },
    async allMetricsJson() {
      return JSON.stringify(await collect());
    },
    async shutdown() {
      await tracer.shutdown();
      await meter.shutdown();
      metrics.disable();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** The span's parent span id ('' for a root). */
export const parentOf = (s: ReadableSpan): string => s.parentSpanContext?.spanId ?? '';

/** Counts of `values`. */
export function tally(values: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
