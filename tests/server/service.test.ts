/**
 * The transport-free service: store failures a retry can outlive are
 * `unavailable` (503, retryable) — also when they happen inside an intent
 * seam (the nonce lookup); the operator principal may do everything.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { TallyError } from '../../src/protocol/index.js';
import { OPERATOR } from '../../src/server/auth.js';
import { WireService } from '../../src/server/service.js';
import { wireErrorRow } from '../../src/server/vocabulary.js';
import { MemoryStore, SqliteStore } from '../../src/store/index.js';
import { carry, frameTime, openIntent, signed, spec as intentSpec } from '../rules/fixtures.js';
import { cleanup, tempDir } from './helpers.js';

/** A real memory store whose nonce lookup fails the way a store that lost its database does (fault injection). */
class NonceLookupFails extends MemoryStore {
  constructor(private readonly failure: () => unknown) {
    super();
  }
  override async nonceOwner(): Promise<undefined> {
    throw this.failure();
  }
}

/** Opens an intent session on `store`, delivers the OPEN frame and answers it with a signed intent. */
async function intentTurn(store: MemoryStore) {
  const service = new WireService(createEngine({ store }));
  const open = await service.call(OPERATOR, 'session/open', { spec: intentSpec(`seam-${Math.random()}`) });
  if (!open.ok) throw new Error(open.failure.message);
  const sessionId = open.result['sessionId'] as string;
  const f = await service.call(OPERATOR, 'session/frame', { sessionId, ordinal: -1, time: frameTime(-1) });
  if (!f.ok) throw new Error(f.failure.message);
  const text = new TextDecoder().decode(carry(await signed(openIntent())));
  const turn = await service.call(OPERATOR, 'session/turn', { sessionId, ordinal: -1, parentHash: f.result['entryHash'], frameRoot: f.result['frameRoot'], body: { kind: 'authored', text } });
  const size = (await store.loadHead(sessionId))?.size;
  return { turn, size };
}

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
    expect(r.meta.error).toBeInstanceOf(TallyError);
    expect(r.meta.error).toMatchObject({ code: 'TALLY_STORE_CLOSED' });
    expect(r.meta).toMatchObject({ method: 'session/describe', session: sid });
    const b = await service.bundle(OPERATOR, sid);
    expect(b).toMatchObject({ ok: false, failure: { type: 'unavailable' } });
  });

  it('a store failure during the nonce lookup (TALLY_INTENT_SEAM_FAILED) is unavailable (503, retryable), and nothing is written', async () => {
    for (const failure of [() => new TallyError('TALLY_STORE_IO', 'connection terminated'), () => new TallyError('TALLY_STORE_BUSY', 'database is locked'), () => new Error('socket hang up')]) {
      const { turn, size } = await intentTurn(new NonceLookupFails(failure));
      expect(turn).toMatchObject({ ok: false, failure: { type: 'unavailable' }, meta: { method: 'session/turn' } });
      expect(turn.meta.error).toMatchObject({ code: 'TALLY_INTENT_SEAM_FAILED' });
      expect(size).toBe(2); // genesis and the frame: the turn was not recorded
    }
  });

  it('a seam failure whose cause is not transient (a corrupt store) stays internal', async () => {
    const { turn } = await intentTurn(new NonceLookupFails(() => new TallyError('TALLY_STORE_CORRUPT', 'bad row')));
    expect(turn).toMatchObject({ ok: false, failure: { type: 'internal' } });
    expect(turn.meta.error).toMatchObject({ code: 'TALLY_INTENT_SEAM_FAILED', cause: { code: 'TALLY_STORE_CORRUPT' } });
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
