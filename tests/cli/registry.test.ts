import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands/index.js';

describe('the lazy command registry', () => {
  it.each(COMMANDS.map((c) => [c.name, c] as const))('%s: the index names and summarises the loaded command', async (_name, entry) => {
    const cmd = await entry.load();
    expect(cmd.name).toBe(entry.name);
    expect(cmd.summary).toBe(entry.summary);
    expect(cmd.help).toContain(`tally ${entry.name}`);
  });

  it('has unique names', () => {
    expect(new Set(COMMANDS.map((c) => c.name)).size).toBe(COMMANDS.length);
  });
});
