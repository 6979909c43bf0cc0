/**
 * docs/HARNESS.md's gateway section cannot drift: its tools-mandate spec,
 * signed by its principal, opens a gateway day under the referee, and its
 * MCP client config starts `tally mcp proxy` with an upstream after `--`.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRefereeEngine } from '../../src/referee/engine.js';
import { KEY_PRINCIPAL, signSpecSync } from '../referee/fixtures.js';

const doc = readFileSync(resolve(import.meta.dirname, '../../docs/HARNESS.md'), 'utf8');
const section = doc.slice(doc.indexOf('## Wrap a real MCP server in one command'));
const jsonBlocks = [...section.slice(0, section.indexOf('\n## ', 5)).matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>);

describe('HARNESS.md, Wrap a real MCP server', () => {
  it('the client config runs tally mcp proxy with an upstream command', () => {
    const servers = jsonBlocks[0]!['mcpServers'] as Record<string, { command: string; args: string[] }>;
    const s = Object.values(servers)[0]!;
    expect(s.command).toBe('npx');
    expect(s.args.slice(0, 3)).toEqual(['tally', 'mcp', 'proxy']);
    expect(s.args.indexOf('--')).toBeGreaterThan(3);
  });

  it('the tools-mandate spec, signed, opens a gateway day', async () => {
    const spec = jsonBlocks[1]!;
    expect(spec['mcp']).toEqual({});
    const { engine } = createRefereeEngine();
    const o = await engine.open(signSpecSync(spec as never, KEY_PRINCIPAL));
    expect(o.ok, o.ok ? '' : o.message).toBe(true);
  });
});
