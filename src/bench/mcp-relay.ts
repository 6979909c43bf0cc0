/**
 * Child process of the MCP bench (`node mcp-relay.js <upstream command…>`):
 * the process hop alone, with nothing recorded. It starts the upstream as its
 * child and relays JSON-RPC lines both ways through the gateway's own line
 * reader (strict parse, then `JSON.stringify`, as `tally mcp proxy` frames
 * them), so its rate against direct calls is the ceiling any stdio proxy
 * written this way can reach on the machine, in the same run.
 */
import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { LineReader } from '../gateway/lines.js';

const MAX_LINE = 10 * 1024 * 1024;

function relay(to: Writable): LineReader {
  return new LineReader(
    {
      value: (v) => void to.write(JSON.stringify(v) + '\n'),
      malformed: () => {},
      oversize: () => {},
    },
    MAX_LINE,
  );
}

const [command, ...args] = process.argv.slice(2);
if (command === undefined) throw new Error('usage: mcp-relay.js <upstream command…>');
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
const up = relay(child.stdin!);
const down = relay(process.stdout);
process.stdin.on('data', (c: Buffer) => up.push(c));
child.stdout!.on('data', (c: Buffer) => down.push(c));
process.stdin.once('end', () => child.stdin!.end());
child.once('exit', () => process.exit(0));
process.once('exit', () => child.kill('SIGKILL'));
