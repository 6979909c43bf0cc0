/**
 * The upstreams of `tally mcp proxy` as the command line gives them
 * (src/cli/commands/mcp-upstreams.ts): the unnamed forms are unchanged, named
 * ones are repeatable and mixable, and every malformed form is a usage error
 * that says what to write.
 */
import { describe, expect, it } from 'vitest';
import { splitCommand, upstreamArgs, upstreamLabel } from '../../src/cli/commands/mcp-upstreams.js';
import { CliError } from '../../src/cli/command.js';

describe('tally mcp proxy upstreams', () => {
  it('keeps the unnamed forms', () => {
    expect(upstreamArgs({}, ['node', 'srv.js'])).toEqual([{ name: undefined, kind: 'command', argv: ['node', 'srv.js'] }]);
    const u = upstreamArgs({ 'upstream-url': ['http://127.0.0.1:9/mcp'] }, []);
    expect(u).toMatchObject([{ name: undefined, kind: 'url' }]);
    expect(upstreamLabel(u)).toBe('http://127.0.0.1:9/mcp');
  });

  it('reads named commands and URLs, in any mix', () => {
    const u = upstreamArgs({ upstream: ["fs=node 'my dir/srv.js' /tmp", 'ev=node ev.js stdio'], 'upstream-url': ['pay=https://pay.example/mcp'] }, []);
    expect(u.map((x) => x.name)).toEqual(['fs', 'ev', 'pay']);
    expect(u[0]).toMatchObject({ kind: 'command', argv: ['node', 'my dir/srv.js', '/tmp'] });
    expect(upstreamLabel(u)).toBe("fs=node my dir/srv.js /tmp ; ev=node ev.js stdio ; pay=https://pay.example/mcp");
  });

  it('refuses what it cannot read, as usage errors', () => {
    const bad = (values: Record<string, unknown>, command: string[] = []) => () => upstreamArgs(values, command);
    expect(bad({})).toThrow(CliError);
    expect(bad({ 'upstream-url': ['http://a/mcp'] }, ['node'])).toThrow(/not both/);
    expect(bad({ upstream: ['a=node x'] }, ['node'])).toThrow(/not after --/);
    expect(bad({ upstream: ['node x'] })).toThrow(/<name>=/);
    expect(bad({ upstream: ['A=node x'] })).toThrow(/<name>=/);
    expect(bad({ upstream: ['a_b=node x'] })).toThrow(/<name>=/);
    expect(bad({ upstream: ['a='] })).toThrow(/needs a command/);
    expect(bad({ upstream: ['a=node x', 'a=node y'] })).toThrow(/twice/);
    expect(bad({ 'upstream-url': ['http://a/mcp', 'http://b/mcp'] })).toThrow(/<name>=/);
    expect(bad({ 'upstream-url': ['a=ftp://x'] })).toThrow(/http\(s\)/);
    expect(() => splitCommand("node 'x")).toThrow(/unbalanced/);
    expect(splitCommand(`a "" 'b c'  d`)).toEqual(['a', '', 'b c', 'd']);
  });
});
