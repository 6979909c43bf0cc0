import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // Tests that run dist/ (serve, mcp, cli, crash/storm workers, perf) always test the current sources,
    // and the first `npx tally` inside the clone is made once, before any file (tests/setup/npx-once.ts).
    globalSetup: ['tests/setup/fresh-dist.ts', 'tests/setup/npx-once.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time on this 2-core machine (vitest's own default is one fewer than the cores: 1 here).
    // Much of the suite waits on child processes, fsync and the network, so two halve its wall time.
    // Tests that share a resource hold it across processes (the docs shell blocks' ports: tests/helpers/docs-shell.ts).
    maxWorkers: 2,
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
  },
});
