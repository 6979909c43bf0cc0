/**
 * The `npm install …` line `tally serve` names when the optional OpenTelemetry
 * SDK packages are absent is the one that satisfies agent-tally's own peer
 * dependency ranges (a drifted range would have a user install a version the
 * package does not declare).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SDK_PEERS, sdkInstallLine } from '../../src/telemetry/sdk.js';

const pkg = JSON.parse(readFileSync(join(resolve(import.meta.dirname, '../..'), 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
// The OpenTelemetry SDK's peers only: the x402 demo's optional peers (hardhat, @x402/*, express) have their own install line (src/x402demo).
const otelPeers = Object.fromEntries(Object.entries(pkg.peerDependencies).filter(([k]) => k.startsWith('@opentelemetry/')));

describe('the SDK install line', () => {
  it('names exactly the optional OpenTelemetry peer dependencies, with their ranges', () => {
    expect(SDK_PEERS).toEqual(otelPeers);
    expect(Object.keys(otelPeers)).toHaveLength(6);
  });

  it('names the three /metrics packages, or all six for --otel, as one npm install', () => {
    expect(sdkInstallLine(false)).toBe('npm install @opentelemetry/sdk-metrics@~2.12.0 @opentelemetry/exporter-prometheus@~0.223.0 @opentelemetry/resources@~2.12.0');
    expect(sdkInstallLine(true).split(' ').slice(2).sort()).toEqual(Object.entries(otelPeers).map(([k, v]) => `${k}@${v}`).sort());
  });
});
