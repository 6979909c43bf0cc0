/**
 * The OpenTelemetry SDK for `tally serve`, loaded only by it (dynamic imports:
 * `tally --help`, the other commands and library users never load an SDK
 * package). Metrics always get a Prometheus reader, rendered by {@link
 * RunningTelemetry.prometheus} for `GET /metrics`; with `traces` (`tally serve
 * --otel`) spans and metrics are also exported over OTLP/HTTP, configured by
 * the standard `OTEL_*` variables (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`,
 * `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`,
 * `OTEL_METRIC_EXPORT_INTERVAL`, …).
 */
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { TallyError } from '../protocol/index.js';

/** Options of {@link startTelemetry}. */
export interface TelemetryOptions {
  /** Export spans and metrics over OTLP/HTTP (`tally serve --otel`). */
  readonly otlp: boolean;
  /**
   * The environment checked for `OTEL_METRIC_EXPORT_INTERVAL` and the OTLP
   * protocol (pass `process.env`: the exporters read their own variables from it).
   */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `service.version` of the resource. */
  readonly serviceVersion?: string;
}

/** A started SDK. */
export interface RunningTelemetry {
  /** True when spans are exported (`--otel`). */
  readonly tracing: boolean;
  /** The current metrics in the Prometheus text exposition format. */
  prometheus(): Promise<string>;
  /** Flushes pending spans and metrics, then unregisters the SDK. */
  shutdown(): Promise<void>;
}

/**
 * The SDK packages `tally serve` needs, with the ranges of agent-tally's
 * optional peer dependencies (tests/telemetry/install-line.test.ts keeps them
 * equal to package.json): the first three serve `/metrics`, all six `--otel`.
 */
export const SDK_PEERS = {
  '@opentelemetry/sdk-metrics': '~2.12.0',
  '@opentelemetry/exporter-prometheus': '~0.223.0',
  '@opentelemetry/resources': '~2.12.0',
  '@opentelemetry/sdk-trace-node': '~2.12.0',
  '@opentelemetry/exporter-trace-otlp-http': '~0.223.0',
  '@opentelemetry/exporter-metrics-otlp-http': '~0.223.0',
} as const;

/** The SDK packages `tally serve` needs; they are optional peer dependencies of agent-tally. */
export const SDK_PACKAGES = Object.keys(SDK_PEERS) as readonly (keyof typeof SDK_PEERS)[];

/**
 * The exact `npm install …` line that adds what `tally serve` needs for
 * `/metrics` (`otlp` false) or for `--otel` too.
 *
 * @example
 * sdkInstallLine(false) // 'npm install @opentelemetry/sdk-metrics@~2.12.0 @opentelemetry/exporter-prometheus@~0.223.0 @opentelemetry/resources@~2.12.0'
 */
export function sdkInstallLine(otlp: boolean): string {
  return `npm install ${SDK_PACKAGES.slice(0, otlp ? SDK_PACKAGES.length : 3)
    .map((p) => `${p}@${SDK_PEERS[p]}`)
    .join(' ')}`;
}

function intervalOf(env: TelemetryOptions['env']): number {
  const v = env['OTEL_METRIC_EXPORT_INTERVAL'];
  if (v === undefined || v === '') return 60_000;
  if (!/^[0-9]{1,9}$/.test(v) || Number(v) < 100) throw new TallyError('TALLY_TELEMETRY_CONFIG', 'OTEL_METRIC_EXPORT_INTERVAL must be an integer number of ms >= 100.', { details: `got ${JSON.stringify(v.slice(0, 20))}` });
  return Number(v);
}

/** The exporters speak OTLP/HTTP with JSON bodies; another protocol asked for is refused, not ignored. */
function checkProtocol(env: TelemetryOptions['env']): void {
  for (const k of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL']) {
    const v = env[k];
    if (v !== undefined && v !== '' && v !== 'http/json') throw new TallyError('TALLY_TELEMETRY_CONFIG', `${k} must be http/json (the only OTLP protocol tally serve --otel speaks).`, { details: `got ${JSON.stringify(v.slice(0, 20))}` });
  }
}

async function load<T>(name: string, importer: () => Promise<T>): Promise<T> {
  try {
    return await importer();
  } catch (cause) {
    throw new TallyError('TALLY_TELEMETRY_MISSING', `Telemetry needs ${name}.`, { details: `install the SDK packages: ${sdkInstallLine(true)}`, cause });
  }
}

/**
 * Registers the SDK globally: a MeterProvider with a Prometheus reader (and
 * an OTLP reader with `otlp`), and with `otlp` a NodeTracerProvider with a
 * batching OTLP/HTTP span exporter, the async-hooks context manager and the
 * W3C trace-context propagator. Throws `TALLY_TELEMETRY_MISSING` when an SDK
 * package is not installed.
 *
 * @example
 * const telemetry = await startTelemetry({ otlp: true, env: process.env });
 * const text = await telemetry.prometheus();
 * await telemetry.shutdown();
 */
export async function startTelemetry(options: TelemetryOptions): Promise<RunningTelemetry> {
  const interval = options.otlp ? intervalOf(options.env) : 0;
  if (options.otlp) checkProtocol(options.env);
  const [sdkMetrics, prom, resources] = await Promise.all([
    load('@opentelemetry/sdk-metrics', () => import('@opentelemetry/sdk-metrics')),
    load('@opentelemetry/exporter-prometheus', () => import('@opentelemetry/exporter-prometheus')),
    load('@opentelemetry/resources', () => import('@opentelemetry/resources')),
  ]);
  const detected = resources.detectResources({ detectors: [resources.envDetector] });
  const resource = resources
    .resourceFromAttributes({ 'service.name': 'tally', ...(options.serviceVersion === undefined ? {} : { 'service.version': options.serviceVersion }) })
    .merge(detected);
  const reader = new prom.PrometheusExporter({ preventServerStart: true });
  const serializer = new prom.PrometheusSerializer(undefined, false, undefined, false, true);
  const readers: import('@opentelemetry/sdk-metrics').IMetricReader[] = [reader];
  let shutdownTraces = async (): Promise<void> => {};
  if (options.otlp) {
    const [node, otlpTraces, otlpMetrics] = await Promise.all([
      load('@opentelemetry/sdk-trace-node', () => import('@opentelemetry/sdk-trace-node')),
      load('@opentelemetry/exporter-trace-otlp-http', () => import('@opentelemetry/exporter-trace-otlp-http')),
      load('@opentelemetry/exporter-metrics-otlp-http', () => import('@opentelemetry/exporter-metrics-otlp-http')),
    ]);
    readers.push(new sdkMetrics.PeriodicExportingMetricReader({ exporter: new otlpMetrics.OTLPMetricExporter(), exportIntervalMillis: interval, exportTimeoutMillis: Math.min(interval, 30_000) }));
    const tracer = new node.NodeTracerProvider({ resource, spanProcessors: [new node.BatchSpanProcessor(new otlpTraces.OTLPTraceExporter())] });
    tracer.register();
    shutdownTraces = () => tracer.shutdown();
  }
  const meter = new sdkMetrics.MeterProvider({ resource, readers });
  metrics.setGlobalMeterProvider(meter);
  let stopped = false;
  return {
    tracing: options.otlp,
    async prometheus() {
      const { resourceMetrics } = await reader.collect();
      return serializer.serialize(resourceMetrics);
    },
    async shutdown() {
      if (stopped) return;
      stopped = true;
      await Promise.allSettled([shutdownTraces(), meter.shutdown()]);
      metrics.disable();
      if (options.otlp) {
        trace.disable();
        propagation.disable();
        context.disable();
      }
    },
  };
}
