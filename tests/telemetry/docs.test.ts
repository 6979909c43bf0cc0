/**
 * docs/WIRE.md §12 equals the code: its readiness table lists READY_CHECKS in
 * order, and its metric table names exactly the metrics `GET /metrics` serves
 * — every instrument Tally creates (src/telemetry/instruments.ts), recorded
 * once and rendered by the Prometheus exporter `tally serve` uses, so a
 * counter's `_total` comes from its kind, not from a list kept here.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { READY_CHECKS } from '../../src/server/ready.js';
import { METRIC } from '../../src/telemetry/index.js';
import { instruments } from '../../src/telemetry/instruments.js';
import { startTelemetry } from '../../src/telemetry/sdk.js';

const doc = readFileSync(resolve(import.meta.dirname, '../../docs/WIRE.md'), 'utf8');

function tableAfter(heading: string): string[][] {
  const at = doc.indexOf(heading);
  expect(at, heading).toBeGreaterThanOrEqual(0);
  const lines = doc.slice(at).split('\n');
  const start = lines.findIndex((l) => l.startsWith('| '));
  const rows: string[][] = [];
  for (let i = start + 2; i < lines.length && lines[i]!.startsWith('|'); i++) rows.push(lines[i]!.slice(1, -1).split(' | ').map((c) => c.trim()));
  return rows;
}

/** The metric families `GET /metrics` renders once every instrument has recorded one value (`# TYPE` lines). */
async function served(): Promise<string[]> {
  const telemetry = await startTelemetry({ otlp: false, env: {} });
  try {
    const made = instruments();
    if (made === undefined) throw new Error('no instruments under a registered MeterProvider');
    for (const i of Object.values(made)) {
      if ('add' in i) i.add(1);
      else i.record(1);
    }
    const text = await telemetry.prometheus();
    // `target_info` is the exporter's rendering of the resource (service.name, …), not an instrument.
    return [...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map((m) => m[1]!).filter((n) => n !== 'target_info');
  } finally {
    await telemetry.shutdown();
  }
}

describe('docs/WIRE.md §12', () => {
  it('lists the readiness checks in order', () => {
    expect(tableAfter('Readiness checks, in the body').map((r) => r[0])).toEqual(READY_CHECKS.map((c) => `\`${c}\``));
  });

  it('lists exactly the metrics GET /metrics serves, and those are the metrics of METRIC', async () => {
    const metrics = (await served()).sort();
    // Every instrument is a METRIC name (dots as `_`, counters with `_total`), and every METRIC name has an instrument.
    expect(metrics.map((n) => n.replace(/_total$/, ''))).toEqual(Object.values(METRIC).map((m) => m.replaceAll('.', '_')).sort());
    const documented = tableAfter('| metric | labels | what |').flatMap((r) => r[0]!.split(', ').map((n) => n.replaceAll('`', '')));
    expect(documented.sort()).toEqual(metrics);
  });
});
