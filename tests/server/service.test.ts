/**
 * The transport-free service: store failures a retry can outlive are
 * `unavailable` (503, retryable); the operator principal may do everything.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { OPERATOR } from '../../src/server/auth.js';
import { WireService } from '../../src/server/service.js';
import { wireErrorRow } from '../../src/server/vocabulary.js';
import { SqliteStore } from '../../src/store/index.js';
import { cleanup, tempDir } from './helpers.js';

afterAll(cleanup);

describe('WireService', () => {
  it('a closed store answers unavailable (retryable), never a diagnostic', async () => {
    const store = new SqliteStore(join(tempDir('svc'), 'tally.db'));
    const service = new WireService(createEngine({ store }));
    const open = await service.call(OPERATOR, 'session/open', { spec: { name: 'svc' } });
    if (!open.ok) throw new Error(open.failure.message);
    const sid = open.result['sessionId'] as string;
    await store.close();
    const r = await service.call(OPERATOR, 'session/describe', { sessionId: sid });
    expect(r).toMatchObject({ ok: false, failure: { type: 'unavailable' } });
    expect(wireErrorRow('unavailable')).toMatchObject({ status: 503, retryable: true });
    expect(r.meta.error).toBeDefined();
    const b = await service.bundle(OPERATOR, sid);
    expect(b).toMatchObject({ ok: false, failure: { type: 'unavailable' } });
  });

  it('the operator writes stand-downs and authored turns in any session', async () => {
    const service = new WireService(createEngine());
    const open = await service.call(OPERATOR, 'session/open', { spec: { name: 'op', agents: { alpha: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' } } });
    if (!open.ok) throw new Error(open.failure.message);
    const sessionId = open.result['sessionId'] as string;
    const f = await service.call(OPERATOR, 'session/frame', { sessionId, ordinal: -1, time: 1 });
    if (!f.ok) throw new Error(f.failure.message);
    const t = await service.call(OPERATOR, 'session/turn', { sessionId, ordinal: -1, parentHash: f.result['entryHash'], frameRoot: f.result['frameRoot'], body: { kind: 'authored', text: 'op' } });
    expect(t).toMatchObject({ ok: true, meta: { method: 'session/turn', session: sessionId, duplicate: false } });
  });
});
