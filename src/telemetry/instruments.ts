/**
 * The metric instruments, bound to whichever MeterProvider is global right
 * now. The API's meters are not proxies (a meter taken before an SDK is
 * registered stays a no-op), so the instruments are re-created when the
 * global provider changes and reused otherwise: one identity check per use.
 */
import { createNoopMeter, metrics, type Counter, type Histogram, type MeterProvider } from '@opentelemetry/api';
import { METRIC, SCOPE } from './names.js';

/** Every instrument Tally records to. */
export interface Instruments {
  readonly turns: Counter;
  readonly verbDuration: Histogram;
  readonly appendDuration: Histogram;
  readonly batchSize: Histogram;
  readonly storeErrors: Counter;
  readonly judgeDuration: Histogram;
  readonly judgeFailures: Counter;
  readonly sessionsOpened: Counter;
  readonly sessionsSealed: Counter;
  readonly verifyEntries: Counter;
  readonly verifyRate: Histogram;
  readonly witnessConflicts: Counter;
}

const MS_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
const RATE_BUCKETS = [1e3, 1e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6];

let bound: { readonly provider: MeterProvider; readonly instruments: Instruments | undefined } | undefined;
const NOOP_METER = createNoopMeter();

/**
 * The instruments of the current global MeterProvider, or `undefined` while
 * none is registered (callers then skip their timers and labels too).
 */
export function instruments(): Instruments | undefined {
  const provider = metrics.getMeterProvider();
  if (bound?.provider === provider) return bound.instruments;
  const m = provider.getMeter(SCOPE);
  if (m === NOOP_METER) {
    bound = { provider, instruments: undefined };
    return undefined;
  }
  const ms = (name: string, description: string): Histogram => m.createHistogram(name, { unit: 'ms', description, advice: { explicitBucketBoundaries: MS_BUCKETS } });
  const made: Instruments = {
    turns: m.createCounter(METRIC.turns, { description: 'Turns answered, by outcome (admitted, refused, recorded, duplicate, diagnostic) and code (ruling code or diagnostic)' }),
    verbDuration: ms(METRIC.verbDuration, 'Engine time per verb call, by verb and result'),
    appendDuration: ms(METRIC.appendDuration, 'Compare-and-append latency, by store outcome'),
    batchSize: m.createHistogram(METRIC.batchSize, { description: 'Appends committed per store transaction (group commit)', advice: { explicitBucketBoundaries: BATCH_BUCKETS } }),
    storeErrors: m.createCounter(METRIC.storeErrors, { description: 'Store exceptions raised during verbs, by error code' }),
    judgeDuration: ms(METRIC.judgeDuration, 'Judge call latency, by model and result'),
    judgeFailures: m.createCounter(METRIC.judgeFailures, { description: 'Judge calls that gave no verdict, by model and failure' }),
    sessionsOpened: m.createCounter(METRIC.sessionsOpened, { description: 'Sessions created (open minus sealed = sessions still open)' }),
    sessionsSealed: m.createCounter(METRIC.sessionsSealed, { description: 'Sessions sealed' }),
    verifyEntries: m.createCounter(METRIC.verifyEntries, { description: 'Bundle entries verified' }),
    verifyRate: m.createHistogram(METRIC.verifyRate, { unit: '{entry}/s', description: 'Entries per second of each bundle verification', advice: { explicitBucketBoundaries: RATE_BUCKETS } }),
    witnessConflicts: m.createCounter(METRIC.witnessConflicts, { description: 'Witness answers that contradict the store (its history was rolled back or forked), by reason' }),
  };
  bound = { provider, instruments: made };
  return made;
}
