/**
 * Upstream failures are frames: a hang (timeout → UNKNOWN), a malformed
 * message, a response with both result and error, a result over the bound,
 * a crash mid-call — each recorded, each answered with a clear isError, and
 * the gateway keeps serving (after a crash it says it cannot). Real child
 * processes (tests/gateway/fixtures/hostile-server.mjs); the day verifies and
 * replays.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { frames, HOSTILE, startDay, toolRulings, verifyAndReplay, type Day } from './helpers.js';

const days: Day[] = [];
afterEach(async () => {
  for (const d of days.splice(0)) await d.upstream.close();
});

const text = (r: Record<string, unknown>) => ((r['result'] as { content: { text: string }[] }).content[0]!.text);
const isError = (r: Record<string, unknown>) => (r['result'] as { isError?: boolean }).isError === true;

describe('upstream failures', () => {
  it('hang, garbage, both, huge: each a recorded frame and a clear error; later calls still served', async () => {
    const d = await startDay(HOSTILE, undefined, { timeoutMs: 400, maxResultBytes: 100_000 });
    days.push(d);
    const hang = await d.call('hang');
    expect(isError(hang)).toBe(true);
    expect(text(hang)).toMatch(/UNKNOWN.*did not answer in time.*may have run/);
    expect(text(await d.call('ok', { n: 1 }))).toBe('ok {"n":1}');
    const garbage = await d.call('garbage');
    expect(text(garbage)).toMatch(/UNKNOWN.*malformed/);
    const both = await d.call('both');
    expect(text(both)).toMatch(/UNKNOWN.*malformed/);
    const huge = await d.call('huge');
    expect(text(huge)).toMatch(/over the gateway's bound.*did run/);
    // A late answer to a call already recorded UNKNOWN is not taken as the next call's answer.
    const late = await d.call('late');
    expect(text(late)).toMatch(/UNKNOWN/);
    expect(text(await d.call('ok', { n: 2 }))).toBe('ok {"n":2}');
    await new Promise((r) => setTimeout(r, 1_300));
    expect(text(await d.call('ok', { n: 3 }))).toBe('ok {"n":3}');
    const receipt = await d.gateway.finish('agent-disconnected');
    const fs = await frames(d.store, d.gateway.sessionId);
    expect(fs.slice(1).map((f) => [f['outcome'], f['reason'] ?? null])).toEqual([
      ['unknown', 'timeout'],
      ['result', null],
      ['unknown', 'malformed'],
      ['unknown', 'malformed'],
      ['too-large', null],
      ['unknown', 'timeout'],
      ['result', null],
      ['result', null],
    ]);
    expect(fs[5]!['bytes']).toBeGreaterThan(2_000_000);
    const { verified, replayed } = await verifyAndReplay(d.store, d.gateway.sessionId);
    expect(verified.ok).toBe(true);
    expect(replayed).toMatchObject({ ok: true, size: receipt.size, receiptRoot: receipt.receiptRoot, rulings: 8 });
  }, 30_000);

  it('a crash mid-call is UNKNOWN; afterwards every call is told the server is gone and nothing is sent', async () => {
    const d = await startDay(HOSTILE);
    days.push(d);
    expect(text(await d.call('ok'))).toBe('ok {}');
    const crash = await d.call('crash');
    expect(text(crash)).toMatch(/UNKNOWN.*exited during the call.*cannot serve further calls/);
    const after = await d.call('ok');
    expect(isError(after)).toBe(true);
    expect(text(after)).toMatch(/not running.*nothing was sent/);
    await d.gateway.finish('upstream-exited');
    const fs = await frames(d.store, d.gateway.sessionId);
    expect(fs.slice(1).map((f) => f['outcome'])).toEqual(['result', 'unknown', 'unavailable']);
    expect(fs[2]!['reason']).toBe('crashed');
    expect((await toolRulings(d.store, d.gateway.sessionId)).map((t) => t.ruling?.['admitted'])).toEqual([true, true, true, undefined]);
    const { verified, replayed } = await verifyAndReplay(d.store, d.gateway.sessionId);
    expect(verified.ok && replayed.ok).toBe(true);
  }, 30_000);
});

describe('tools/list_changed', () => {
  it('the next frame carries the new list, and calls are ruled against it', async () => {
    const d = await startDay(HOSTILE);
    days.push(d);
    const changed: number[] = [];
    d.gateway.onToolsChanged = () => changed.push(1);
    expect(text(await d.call('grown'))).toMatch(/tool_not_offered/);
    expect(text(await d.call('grow'))).toBe('grew');
    expect(changed).toHaveLength(1);
    expect(text(await d.call('grown'))).toBe('the new tool');
    const listed = await d.gateway.handle({ jsonrpc: '2.0', id: 'l', method: 'tools/list' });
    expect(JSON.stringify(listed)).toContain('"grown"');
    await d.gateway.finish('agent-disconnected');
    const fs = await frames(d.store, d.gateway.sessionId);
    expect(fs.map((f) => Array.isArray(f['tools']))).toEqual([true, false, true, false]);
    const { verified, replayed } = await verifyAndReplay(d.store, d.gateway.sessionId);
    expect(verified.ok && replayed.ok).toBe(true);
  }, 30_000);
});

describe('a store that fails mid-day', () => {
  it('the agent gets a JSON-RPC error naming it, and later calls are refused without reaching the upstream', async () => {
    const { PassThrough } = await import('node:stream');
    const { serveStdio } = await import('../../src/gateway/index.js');
    const d = await startDay(HOSTILE);
    days.push(d);
    // Fault injection on the real store: its next append fails as a full disk would.
    const append = d.store.append.bind(d.store);
    let fail = false;
    d.store.append = (async (...a: Parameters<typeof append>) => {
      if (fail) throw new Error('disk full (injected)');
      return append(...a);
    }) as typeof d.store.append;
    const input = new PassThrough();
    const output = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    output.on('data', (c: Buffer) => lines.push(...c.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)));
    const errors: unknown[] = [];
    const served = serveStdio(d.gateway, input, output, (e) => errors.push(e));
    const send = (m: unknown) => input.write(JSON.stringify(m) + '\n');
    send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ok' } });
    for (let i = 0; i < 100 && lines.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
    fail = true;
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ok' } });
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'ok' } });
    input.end();
    await served;
    expect(lines.map((l) => l['id'])).toEqual([1, 2, 3]);
    expect((lines[1]!['error'] as { message: string }).message).toMatch(/could not record this request \(.*disk full/);
    expect((lines[2]!['error'] as { message: string }).message).toMatch(/stopped recording after a store failure.*nothing was sent upstream/);
    expect(errors).toHaveLength(1);
    expect(d.gateway.counts.upstreamCalls).toBe(1);
  }, 30_000);
});
