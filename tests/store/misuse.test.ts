/**
 * Every store (the replay's scratch store too) refuses, before it looks at its data, a request that is not
 * one consistent step (src/store/request.ts): a frame or turn off the index
 * its ordinal gives, a head in another phase than the entry's kind leaves,
 * a new session that is not a genesis awaiting its first frame. Each is
 * TALLY_STORE_MISUSE and writes nothing — a bad phase stored by PostgreSQL
 * (which keeps it in the entry row) would make the session unreadable for
 * good, and would disagree with the other stores about "sealed".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppendRequest } from '../../src/store/index.js';
import { entriesOf, headAt, recordChains, type RecordedChain } from './helpers/record.js';
import { STORE_KINDS, scratchKind, type StoreEnv } from './helpers/stores.js';
import { warnIfSkipped } from './helpers/pg.js';

warnIfSkipped('misuse.test.ts');

let chain: RecordedChain;
beforeAll(async () => {
  [chain] = (await recordChains('misuse', [2], true)) as [RecordedChain];
});

const misuse = expect.objectContaining({ code: 'TALLY_STORE_MISUSE' });

// The replay's scratch store too: a ruler or engine bug during replay must not be stored silently.
for (const kind of [...STORE_KINDS, scratchKind]) {
  describe.skipIf(kind.skip)(`${kind.label}: misuse is refused before any write`, () => {
    let env: StoreEnv;
    beforeAll(async () => {
      env = await kind.fresh();
      expect(await env.store.createSession(chain.genesis, chain.head0)).toBe('created');
    });
    afterAll(async () => env?.dispose());

    const frame = (): AppendRequest => chain.appends[0]!; // the OPEN frame, entry 1
    const cases: [string, () => AppendRequest][] = [
      ['a frame leaving the session awaiting a frame', () => ({ ...frame(), next: { ...frame().next, phase: 'awaiting-frame' } })],
      ['a frame claiming to seal the session', () => ({ ...frame(), next: { ...frame().next, phase: 'sealed' } })],
      ['a phase outside the vocabulary', () => ({ ...frame(), next: { ...frame().next, phase: 'bogus' as 'sealed' } })],
      ['a frame at the index of another ordinal', () => ({ ...frame(), entry: { ...frame().entry, ordinal: 0 } })],
      ['a turn where the frame goes', () => ({ ...frame(), entry: { ...frame().entry, kind: 'turn' } })],
      ['a finalize carrying an ordinal', () => ({ ...frame(), entry: { ...frame().entry, kind: 'finalize' }, next: { ...frame().next, phase: 'sealed' } })],
    ];
    for (const [what, req] of cases) {
      it(what, async () => {
        await expect(env.store.append(req())).rejects.toEqual(misuse);
        expect(await env.store.loadHead(chain.sessionId)).toEqual(headAt(chain, 1));
        expect(await env.store.readRange(chain.sessionId, 0, 9)).toEqual(entriesOf(chain).slice(0, 1));
      });
    }

    it('a new session whose head is not awaiting its first frame, or whose genesis is not one', async () => {
      const other = (await recordChains('misuse-new', [0], false))[0]!;
      await expect(env.store.createSession(other.genesis, { ...other.head0, phase: 'pending' })).rejects.toEqual(misuse);
      await expect(env.store.createSession({ ...other.genesis, kind: 'frame' }, other.head0)).rejects.toEqual(misuse);
      expect(await env.store.loadHead(other.sessionId)).toBeUndefined();
      // The well-formed step still goes in afterwards.
      expect(await env.store.append(frame())).toEqual({ ok: true });
    });
  });
}
