import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // Tests that run dist/ (serve, mcp, cli, crash/storm workers, perf) always test the current sources.
    globalSetup: ['tests/setup/fresh-dist.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
  },
});
