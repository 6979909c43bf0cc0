/** Drives a plain session: opens `{name}`, then `turns` (frame, stand-down turn) pairs. Returns the session id. */
import type { Engine } from '../../src/session/index.js';

const T0 = Date.UTC(2026, 0, 5, 9);

export async function drive(engine: Engine, name: string, turns: number): Promise<string> {
  const o = await engine.open({ name });
  if (!o.ok) throw new Error(o.message);
  for (let i = 0; i < turns; i++) {
    const ordinal = i - 1;
    const f = await engine.frame({ sessionId: o.sessionId, ordinal, time: T0 + i * 1000 });
    if (!f.ok) throw new Error(f.message);
    const t = await engine.turn({ sessionId: o.sessionId, ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'stand-down', failureClass: 'timeout' } });
    if (!t.ok) throw new Error(t.message);
  }
  return o.sessionId;
}
