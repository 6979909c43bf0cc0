/**
 * Model-based test of the controller: random sequences of opens, frames,
 * turns, identical retries, conflicting retries, stale answers, broken
 * chains, stand-downs, finalizes and post-seal calls, checked against a
 * simple model; every produced bundle verifies and matches its receipt.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import { createEngine, type Engine, type TurnBodyInput } from '../../src/session/index.js';

interface MSession {
  sid: string;
  phase: 'awaiting-frame' | 'pending' | 'sealed';
  nextOrdinal: number;
  time: number;
  head: string;
  pending?: { ordinal: number; hash: string; root: string } | undefined;
  frames: Map<number, { hash: string; root: string; time: number; data: string }>;
  turns: Map<number, { body: TurnBodyInput; hash: string; parent: string; root: string }>;
  seal?: { art: string; receipt: unknown };
  size: number;
}
interface Model {
  specs: Map<number, MSession>;
}
interface Real {
  engine: Engine;
}

const SPECS = 3;
const enc = new TextEncoder();
const bodies: TurnBodyInput[] = [
  { kind: 'authored', bytes: enc.encode('buy 1') },
  { kind: 'authored', bytes: enc.encode('sell 2') },
  { kind: 'authored', bytes: new Uint8Array([0, 255, 10, 13]) },
  { kind: 'stand-down', failureClass: 'provider' },
  { kind: 'stand-down', failureClass: 'timeout' },
  { kind: 'stand-down', failureClass: 'malformed' },
];
const spec = (i: number) => ({ name: `model-${i}`, run: 'fc' });

function pick<T>(m: Map<number, T>, k: number): T | undefined {
  const vals = [...m.values()];
  return vals.length ? vals[k % vals.length] : undefined;
}

type Cmd = fc.AsyncCommand<Model, Real>;

class Open implements Cmd {
  constructor(readonly i: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const res = await r.engine.open(spec(this.i));
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    const known = m.specs.get(this.i);
    expect(res.created).toBe(!known);
    if (known) expect(res.sessionId).toBe(known.sid);
    else m.specs.set(this.i, { sid: res.sessionId, phase: 'awaiting-frame', nextOrdinal: -1, time: 0, head: res.sessionId, frames: new Map(), turns: new Map(), size: 1 });
  }
  toString = () => `open(${this.i})`;
}

class Frame implements Cmd {
  constructor(readonly i: number, readonly dt: number, readonly d: string) {}
  check = (m: Readonly<Model>) => m.specs.has(this.i);
  async run(m: Model, r: Real) {
    const s = m.specs.get(this.i)!;
    const time = s.time + this.dt;
    const res = await r.engine.frame({ sessionId: s.sid, ordinal: s.nextOrdinal, time, data: { d: this.d } });
    if (s.phase === 'sealed') return void expect(res).toMatchObject({ ok: false, diagnostic: 'sealed' });
    if (s.phase === 'pending') {
      // The slot of the pending frame is recorded: the same content is a retry, other content a conflict.
      const p = s.frames.get(s.nextOrdinal)!;
      if (p.time === time && p.data === this.d) return void expect(res).toMatchObject({ ok: true, duplicate: true, entryHash: p.hash });
      return void expect(res).toMatchObject({ ok: false, diagnostic: 'turn-conflict' });
    }
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.duplicate).toBe(false);
    s.frames.set(s.nextOrdinal, { hash: res.entryHash, root: res.frameRoot, time, data: this.d });
    s.pending = { ordinal: s.nextOrdinal, hash: res.entryHash, root: res.frameRoot };
    s.phase = 'pending';
    s.time = time;
    s.head = res.entryHash;
    s.size++;
  }
  toString = () => `frame(${this.i},+${this.dt})`;
}

class FrameAhead implements Cmd {
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => m.specs.get(this.i)?.phase === 'pending';
  async run(m: Model, r: Real) {
    const s = m.specs.get(this.i)!;
    const res = await r.engine.frame({ sessionId: s.sid, ordinal: s.pending!.ordinal + 1, time: s.time });
    expect(res).toMatchObject({ ok: false, diagnostic: 'not-pending' });
  }
  toString = () => `frameAhead(${this.i})`;
}

class Turn implements Cmd {
  constructor(readonly i: number, readonly b: number) {}
  check = (m: Readonly<Model>) => m.specs.has(this.i);
  async run(m: Model, r: Real) {
    const s = m.specs.get(this.i)!;
    const body = bodies[this.b]!;
    const slot = s.pending ?? { ordinal: s.nextOrdinal, hash: s.head, root: 'f'.repeat(64) };
    const res = await r.engine.turn({ sessionId: s.sid, ordinal: slot.ordinal, parentHash: slot.hash, frameRoot: slot.root, body });
    if (s.phase === 'sealed') return void expect(res).toMatchObject({ ok: false, diagnostic: 'sealed' });
    if (s.phase !== 'pending') return void expect(res).toMatchObject({ ok: false, diagnostic: 'not-pending' });
    expect(res).toMatchObject({ ok: true, duplicate: false, ordinal: slot.ordinal, index: s.size });
    if (!res.ok) return;
    s.turns.set(slot.ordinal, { body, hash: res.entryHash, parent: slot.hash, root: slot.root });
    s.pending = undefined;
    s.phase = 'awaiting-frame';
    s.nextOrdinal = slot.ordinal + 1;
    s.head = res.entryHash;
    s.size++;
  }
  toString = () => `turn(${this.i},${this.b})`;
}

class Retry implements Cmd {
  constructor(readonly i: number, readonly k: number) {}
  check = (m: Readonly<Model>) => (m.specs.get(this.i)?.turns.size ?? 0) > 0;
  async run(m: Model, r: Real) {
    const s = m.specs.get(this.i)!;
    const [ordinal, t] = [...s.turns.entries()][this.k % s.turns.size]!;
    const res = await r.engine.turn({ sessionId: s.sid, ordinal, parentHash: t.parent, frameRoot: t.root, body: t.body });
    expect(res).toMatchObject({ ok: true, duplicate: true, entryHash: t.hash });
  }
  toString = () => `retry(${this.i},${this.k})`;
}

class Conflict implements Cmd {
  constructor(readonly i: number, readonly k: number, readonly b: number) {}
  check = (m: Readonly<Model>) => (m.specs.get(this.i)?.turns.size ?? 0) > 0;
  async run(m: Model, r: Real) {
    const s = m.specs.get(this.i)!;
    const [ordinal, t] = [...s.turns.entries()][this.k % s.turns.size]!;
    const body = bodies[this.b]!;
    const res = await r.engine.turn({ sessionId: s.sid, ordinal, parentHash: t.parent, frameRoot: t.root, body });
    if (body === t.body) return void expect(res).toMatchObject({ ok: true, duplicate: true, entryHash: t.hash });
    expect(res).toMatchObject({ ok: false, diagnostic: s.phase === 'sealed' ? 'sealed' : 'turn-conflict' });
  }
  toString = () => `conflict(${this.i},${this.k},${this.b})`;
}

class Stale implements Cmd {
  constructor(readonly i: number, readonly k: number) {}
  check = (m: Readonly<Model>) => m.specs.get(this.i)?.phase === 'pending';
  async run(m: Model, r: Real) {
    const s = m.specs.get(this.i)!;
    const p = s.pending!;
    const old = pick(s.frames, this.k)!;
    const root = old.root === p.root ? 'e'.repeat(64) : old.root;
    const res = await r.engine.turn({ sessionId: s.sid, ordinal: p.ordinal, parentHash: p.hash, frameRoot: root, body: bodies[0]! });
    expect(res).toMatchObject({ ok: false, diagnostic: 'stale-frame' });
  }
  toString = () => `stale(${this.i},${this.k})`;
}

class Broken implements Cmd {
  constructor(readonly i: number, readonly off: number) {}
  check = (m: Readonly<Model>) => m.specs.get(this.i)?.phase === 'pending';
  async run(m: Model, r: Real) {
    const s = m.specs.get(this.i)!;
    const p = s.pending!;
    // Either a future ordinal (no such slot) or the right ordinal with a wrong parent.
    const res = this.off > 0
      ? await r.engine.turn({ sessionId: s.sid, ordinal: p.ordinal + this.off, parentHash: p.hash, frameRoot: p.root, body: bodies[0]! })
      : await r.engine.turn({ sessionId: s.sid, ordinal: p.ordinal, parentHash: 'd'.repeat(64), frameRoot: p.root, body: bodies[0]! });
    expect(res).toMatchObject({ ok: false, diagnostic: 'broken-chain' });
  }
  toString = () => `broken(${this.i},${this.off})`;
}

class WrongSession implements Cmd {
  check = () => true;
  async run(_m: Model, r: Real) {
    const res = await r.engine.turn({ sessionId: '9'.repeat(64), ordinal: 0, parentHash: 'a'.repeat(64), frameRoot: 'b'.repeat(64), body: bodies[0]! });
    expect(res).toMatchObject({ ok: false, diagnostic: 'wrong-session' });
  }
  toString = () => 'wrongSession';
}

class FrameRetry implements Cmd {
  constructor(readonly i: number, readonly k: number, readonly same: boolean) {}
  check = (m: Readonly<Model>) => (m.specs.get(this.i)?.frames.size ?? 0) > 0;
  async run(m: Model, r: Real) {
    const s = m.specs.get(this.i)!;
    const [ordinal, f] = [...s.frames.entries()][this.k % s.frames.size]!;
    const res = await r.engine.frame({ sessionId: s.sid, ordinal, time: f.time, data: { d: this.same ? f.data : f.data + '!' } });
    if (this.same) expect(res).toMatchObject({ ok: true, duplicate: true, entryHash: f.hash });
    else expect(res).toMatchObject({ ok: false, diagnostic: s.phase === 'sealed' ? 'sealed' : 'turn-conflict' });
  }
  toString = () => `frameRetry(${this.i},${this.k},${this.same})`;
}

class Finalize implements Cmd {
  constructor(readonly i: number, readonly art: string) {}
  check = (m: Readonly<Model>) => m.specs.has(this.i);
  async run(m: Model, r: Real) {
    const s = m.specs.get(this.i)!;
    const res = await r.engine.finalize(s.sid, { grade: this.art });
    if (s.seal) {
      if (s.seal.art === this.art) expect(res).toEqual({ ok: true, receipt: s.seal.receipt, duplicate: true });
      else expect(res).toMatchObject({ ok: false, diagnostic: 'sealed' });
      return;
    }
    if (s.phase === 'pending') return void expect(res).toMatchObject({ ok: false, diagnostic: 'not-pending' });
    expect(res).toMatchObject({ ok: true, duplicate: false });
    if (!res.ok) return;
    expect(res.receipt.size).toBe(s.size + 1);
    s.seal = { art: this.art, receipt: res.receipt };
    s.phase = 'sealed';
    s.size++;
  }
  toString = () => `finalize(${this.i},${this.art})`;
}

const idx = fc.integer({ min: 0, max: SPECS - 1 });
const commands = [
  idx.map((i) => new Open(i)),
  fc.tuple(idx, fc.integer({ min: 0, max: 5000 }), fc.constantFrom('x', 'y', 'z')).map(([i, dt, d]) => new Frame(i, dt, d)),
  idx.map((i) => new FrameAhead(i)),
  fc.tuple(idx, fc.integer({ min: 0, max: bodies.length - 1 })).map(([i, b]) => new Turn(i, b)),
  fc.tuple(idx, fc.nat()).map(([i, k]) => new Retry(i, k)),
  fc.tuple(idx, fc.nat(), fc.integer({ min: 0, max: bodies.length - 1 })).map(([i, k, b]) => new Conflict(i, k, b)),
  fc.tuple(idx, fc.nat()).map(([i, k]) => new Stale(i, k)),
  fc.tuple(idx, fc.integer({ min: 0, max: 3 })).map(([i, o]) => new Broken(i, o)),
  fc.constant(new WrongSession()),
  fc.tuple(idx, fc.nat(), fc.boolean()).map(([i, k, same]) => new FrameRetry(i, k, same)),
  fc.tuple(idx, fc.constantFrom('A', 'B')).map(([i, a]) => new Finalize(i, a)),
];

describe('controller vs model', () => {
  it('agrees on every step and every bundle verifies (seed 0x5e55)', async () => {
    let executed = 0;
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 120, size: 'large' }), async (cmds) => {
        const engine = createEngine();
        const model: Model = { specs: new Map() };
        await fc.asyncModelRun(() => ({ model, real: { engine } }), cmds);
        executed += [...cmds].length;
        for (const s of model.specs.values()) {
          const lines: Uint8Array[] = [];
          for await (const l of engine.exportEntries(s.sid)) lines.push(l);
          expect(lines.length).toBe(s.size);
          const v = await verifyBundle([encodeBundle(lines)], { requireSealed: false });
          expect(v.ok).toBe(true);
          if (!v.ok) return;
          expect(v.sealed).toBe(s.phase === 'sealed');
          if (s.seal) expect((s.seal.receipt as { receiptRoot: string }).receiptRoot).toBe(v.receiptRoot);
          const d = await engine.describe(s.sid);
          expect(d).toMatchObject({ ok: true, phase: s.phase, size: s.size, head: v.head, nextOrdinal: s.nextOrdinal });
          if (d.ok) expect(d.counts.turns).toBe(s.turns.size);
        }
      }),
      { seed: 0x5e55, numRuns: 150 },
    );
    // Guard against a vacuous run: the sequences must be long enough to reach every phase.
    expect(executed).toBeGreaterThan(3000);
  });
});
