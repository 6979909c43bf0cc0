/**
 * `npm run bench`: every benchmark, each figure printed beside a baseline
 * measured in the same run (ratios, never wall-clock assertions).
 */
import { benchCore, type Figure } from './core.js';

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

function print(title: string, figures: readonly Figure[]): void {
  process.stdout.write(`\n== ${title}\n`);
  for (const f of figures) {
    process.stdout.write(`${f.name}: ${fmt(f.perSecond)}/s  |  ${f.baselineName}: ${fmt(f.baselinePerSecond)}/s  |  ratio ${f.ratio.toFixed(3)}${f.note ? `  (${f.note})` : ''}\n`);
  }
}

const turns = Number(process.env['TALLY_BENCH_TURNS'] ?? 50_000);
process.stdout.write(`tally bench — node ${process.version}, ${turns} turns\n`);
print('core', await benchCore(turns));
