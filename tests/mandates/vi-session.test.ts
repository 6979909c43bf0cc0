/**
 * Sessions under a Verifiable Intent v0.1 L2 autonomous credential, on the
 * real engine and a real SQLite store: the L1 and L2 are recorded verbatim in
 * the genesis spec (`vi`), each purchase is the agent's L3a payment mandate,
 * and the budget is spent across sessions of one store through the same
 * history and constraint code as an AP2 session. The credential is the `vi`
 * vector `valid-autonomous` (docs/vectors/ap2.json); the L3a is made with
 * @sd-jwt/core and the agent's test key from that file (./vi-fixtures.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeBundle } from '../../src/codec/index.js';
import { createEngine } from '../../src/engine.js';
import { createAp2Ruler } from '../../src/mandates/index.js';
import { replay } from '../../src/receipt/index.js';
import { openStore } from '../../src/store/index.js';
import { inProcess } from '../cli/in-process.js';
import { AUD, b64sha, cred, keys, purchase, T0 } from './vi-fixtures.js';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'tally-vi-'));
  dirs.push(dir);
  const store = await openStore(`sqlite:${join(dir, 'vi.db')}`);
  const engine = createEngine({ store, ruler: createAp2Ruler({ store }) });
  const day = async (name: string) => {
    const o = await engine.open({ name, vi: { l1: cred.l1, l2: cred.l2, issuer: keys['issuer']!.public, audience: AUD } } as never);
    if (!o.ok) throw new Error(o.message);
    let ordinal = -1;
    return Object.assign(async (body: Uint8Array, time: number) => {
      const f = await engine.frame({ sessionId: o.sessionId, ordinal, time });
      if (!f.ok) throw new Error(f.message);
      ordinal++;
      const t = await engine.turn({ sessionId: o.sessionId, ordinal: f.ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes: body } });
      if (!t.ok) throw new Error(t.message);
      return (t.ruling as { ap2: Record<string, unknown> }).ap2;
    }, { sessionId: o.sessionId });
  };
  const bundleOf = async (sid: string) => {
    const fin = await engine.finalize(sid, { note: 'done' });
    if (!fin.ok) throw new Error(fin.message);
    const lines: Uint8Array[] = [];
    for await (const l of engine.exportEntries(sid)) lines.push(l);
    return encodeBundle(lines);
  };
  return { store, engine, day, bundleOf };
}

describe('a day under a Verifiable Intent L2 autonomous credential', () => {
  it('spends the budget across two sessions of one store: within admitted, over refused, the exact rest admitted; replay re-derives each day', async () => {
    const { store, day, bundleOf } = await setup();
    const a = await day('desk-a');
    const b = await day('desk-b');
    const s = T0 / 1000;
    expect(await a(await purchase({ amount: 27_999, nonce: 'p1', iat: s }), T0)).toMatchObject({ admitted: true, use: 0, spent_before: 0 });
    expect(await b(await purchase({ amount: 20_000, nonce: 'p2', iat: s + 1 }), T0 + 1000)).toMatchObject({ admitted: true, use: 1, spent_before: 27_999, external: [{ use: 0, amount: 27_999 }] });
    // 47 999 of 50 000 minor units spent: 5 000 more would exceed the budget; 2 001 fits exactly.
    expect(await a(await purchase({ amount: 5_000, nonce: 'p3', iat: s + 2 }), T0 + 2000)).toMatchObject({ admitted: false, code: 'constraint-violated', violations: ['payment.budget'], spent_before: 47_999 });
    expect(await a(await purchase({ amount: 2_001, nonce: 'p4', iat: s + 3 }), T0 + 3000)).toMatchObject({ admitted: true, use: 2, spent_before: 47_999 });
    expect(await b(await purchase({ amount: 30_001, nonce: 'p5', iat: s + 4 }), T0 + 4000)).toMatchObject({ admitted: false, violations: ['payment.amount_range', 'payment.budget'] });

    const rb = await replay([await bundleOf(b.sessionId)], { ruler: (st) => createAp2Ruler({ store: st }) });
    expect(rb.ok, JSON.stringify(rb).slice(0, 1500)).toBe(true);
    if (rb.ok) expect(rb.externalFacts.map((f) => [f.kind, f.nonce])).toEqual([['ap2-use', 'use:0'], ['ap2-use', 'use:2']]);
    const ra = await replay([await bundleOf(a.sessionId)], { ruler: (st) => createAp2Ruler({ store: st }) });
    expect(ra.ok, JSON.stringify(ra).slice(0, 1500)).toBe(true);
    if (ra.ok) expect(ra.externalFacts.map((f) => f.nonce)).toEqual(['use:1']);
    // tally replay picks the AP2 ruler from spec.vi and agrees.
    const file = join(dirs[dirs.length - 1]!, 'desk-a.bundle');
    writeFileSync(file, await bundleOf(a.sessionId));
    const cli = await inProcess(['replay', file]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/all 3 rulings re-derived/);
    expect(cli.stdout).toMatch(/^ruler +ap2$/m);
    await store.close();
  });

  it('refuses an L3a the chain does not authorise, each with its code', async () => {
    const { store, day } = await setup();
    const a = await day('desk');
    const s = T0 / 1000;
    const at = (k: number) => T0 + k * 1000;
    expect(await a(await purchase({ amount: 100, nonce: 'k1', iat: s, key: 'other' }), at(1))).toMatchObject({ admitted: false, code: 'kb-signature' });
    expect(await a(await purchase({ amount: 100, nonce: 'k2', iat: s, kid: 'agent-key-2' }), at(2))).toMatchObject({ admitted: false, code: 'kb-header' });
    expect(await a(await purchase({ amount: 100, nonce: 'k3', iat: s, over: { cnf: { jwk: keys['agent']!.public } } }), at(3))).toMatchObject({ admitted: false, code: 'kb-claims' });
    expect(await a(await purchase({ amount: 100, nonce: 'k4', iat: s, txFor: 'another checkout' }), at(4))).toMatchObject({ admitted: false, code: 'closed-transaction-id' });
    expect(await a(await purchase({ amount: 100, nonce: 'k5', iat: s, sdHash: b64sha(cred.l2) }), at(5))).toMatchObject({ admitted: false, code: 'kb-sd-hash' });
    expect(await a(await purchase({ amount: 100, nonce: 'k6', iat: s, mandate: { vct: 'mandate.payment.open' } }), at(6))).toMatchObject({ admitted: false, code: 'closed-vct' });
    expect(await a(await purchase({ amount: 100, nonce: 'k7', iat: s, over: { exp: s + 3_601 } }), at(7))).toMatchObject({ admitted: false, code: 'kb-claims' });
    expect(await a(await purchase({ amount: 100, nonce: 'k8', iat: s }), at(8))).toMatchObject({ admitted: true });
    expect(await a(await purchase({ amount: 100, nonce: 'k8', iat: s }), at(9))).toMatchObject({ admitted: false, code: 'kb-replayed' });
    // The credential itself at a frame time past the L2's exp.
    const late = T0 + 31 * 86_400_000;
    expect(await a(await purchase({ amount: 100, nonce: 'k9', iat: late / 1000 }), late)).toMatchObject({ admitted: false, code: 'mandate-expired' });
    await store.close();
  });

  it('refuses at open a spec whose vi member is malformed', async () => {
    const { store, engine } = await setup();
    const bad = await engine.open({ name: 'x', vi: { l1: cred.l1, l2: cred.l2, issuer: keys['issuer']!.private, audience: AUD } } as never);
    expect(bad.ok).toBe(false);
    const noAudience = await engine.open({ name: 'y', vi: { l1: cred.l1, l2: cred.l2, issuer: keys['issuer']!.public } } as never);
    expect(noAudience.ok).toBe(false);
    await store.close();
  });
});
