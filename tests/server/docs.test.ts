/**
 * The reference cannot drift: docs/WIRE.md's error table equals WIRE_ERRORS,
 * its tool table names the tools and verbs, and the public surface of
 * `agent-tally/server` and `agent-tally/client` is pinned (a change here is an
 * API change).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as client from '../../src/client/index.js';
import * as server from '../../src/server/index.js';

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

describe('docs/WIRE.md', () => {
  it('§7 lists exactly WIRE_ERRORS, in order, with code, status, retry and when', () => {
    const rows = tableAfter('## 7. Error vocabulary');
    expect(rows).toEqual(server.WIRE_ERRORS.map((r) => [`\`${r.type}\``, String(r.code), String(r.status), r.retryable ? 'yes' : 'no', r.when]));
  });

  it('§8 lists every MCP tool with its verb', () => {
    const rows = tableAfter('Tools, whose input schemas');
    expect(rows.map((r) => r[0])).toEqual(server.TOOLS.map((t) => `\`${t.name}\``));
    for (const t of server.TOOLS) if (t.method) expect(rows.find((r) => r[0] === `\`${t.name}\``)![1]).toBe(`\`${t.method}\``);
  });
});

describe('public surface', () => {
  it('agent-tally/server', () => {
    expect(Object.keys(server).sort()).toEqual([
      'Authenticator', 'DEFAULT_LIMITS', 'MAX_TOKEN_LENGTH', 'OPERATOR', 'PARAMS_SCHEMAS', 'ROLES', 'RateLimiter', 'TOOLS', 'TokenBucket', 'WIRE_ERRORS', 'WIRE_ERROR_TYPES',
      'WireServer', 'WireService', 'adviceFor', 'authConfigSchema', 'authoredBytesOf', 'createLogger', 'createMcpServer', 'createWireServer', 'decodeParams', 'describeParams',
      'eventsParams', 'finalizeParams', 'frameParams', 'generateToken', 'handleRpc', 'hashToken', 'httpErrorBody', 'inputJsonSchema', 'intentFix', 'isSessionDiagnostic',
      'isWireErrorType', 'loadAuthConfig', 'localBackend', 'nestsDeeperThan', 'openParams', 'parseAuthConfig', 'parseJsonBody', 'roleMayCall', 'rpcError', 'rpcErrorObject',
      'sessionAccess', 'toolNamed', 'turnAccess', 'turnParams', 'verifyParams', 'wireErrorRow', 'wireErrorRowByCode',
    ]);
  });

  it('agent-tally/client', () => {
    expect(Object.keys(client).sort()).toEqual(['DEFAULT_RETRY', 'WireError', 'backoffDelay', 'createClient', 'fetchTransport', 'keepAliveTransport', 'rulingView']);
  });
});
