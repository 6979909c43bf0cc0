/**
 * docs/WIRE.md §12 equals the code: its readiness table lists READY_CHECKS in
 * order, and its metric table names every metric of METRIC (in its Prometheus
 * spelling) and nothing else.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { READY_CHECKS } from '../../src/server/ready.js';
import { METRIC } from '../../src/telemetry/index.js';

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

/** Counters are rendered with `_total` (the Prometheus convention the exporter follows). */
const COUNTERS = new Set<string>([METRIC.turns, METRIC.storeErrors, METRIC.judgeFailures, METRIC.sessionsOpened, METRIC.sessionsSealed, METRIC.verifyEntries]);
const prometheusName = (m: string): string => m.replaceAll('.', '_') + (COUNTERS.has(m) ? '_total' : '');

describe('docs/WIRE.md §12', () => {
  it('lists the readiness checks in order', () => {
    expect(tableAfter('Readiness checks, in the body').map((r) => r[0])).toEqual(READY_CHECKS.map((c) => `\`${c}\``));
  });

  it('lists exactly the metrics', () => {
    const documented = tableAfter('| metric | labels | what |').flatMap((r) => r[0]!.split(', ').map((n) => n.replaceAll('`', '')));
    expect(documented.sort()).toEqual(Object.values(METRIC).map(prometheusName).sort());
  });
});
