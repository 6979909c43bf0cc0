/**
 * `TranscriptStore.reserve`, the reservation a judge call makes before it is
 * asked: every claim or none, a held claim named with its owner, the owner
 * the (session, index) given — on every store; and of concurrent
 * reservations of one claim exactly one succeeds.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { NonceClaim } from '../../src/store/index.js';
import { memoryKind, postgresKind, sqliteKind } from './helpers/stores.js';
import { removeTempDirs } from './helpers/tmp.js';

afterAll(removeTempDirs);

const claim = (agentId: string, nonce: string, intentHash = '0x' + 'ab'.repeat(32)): NonceClaim => ({ agentId, nonce, intentHash });

for (const kind of [memoryKind, sqliteKind, postgresKind]) {
  describe.skipIf(kind.skip)(`reserve (${kind.label})`, () => {
    it('reserves every claim or none, and names the owner of a held one', async () => {
      const env = await kind.fresh();
      try {
        const s = env.store;
        expect(await s.reserve!('sess-a', 4, [claim('0xk alpha', 'n1'), claim('judge-wallet 60000 0xk', '1/0')])).toEqual({ ok: true });
        expect(await s.nonceOwner('0xk alpha', 'n1')).toEqual({ intentHash: '0x' + 'ab'.repeat(32), sessionId: 'sess-a', index: 4 });
        const r = await s.reserve!('sess-b', 2, [claim('judge-wallet 60000 0xk', '1/1'), claim('0xk alpha', 'n1', '0x' + 'cd'.repeat(32))]);
        expect(r).toEqual({ ok: false, reason: 'nonce-taken', agentId: '0xk alpha', nonce: 'n1', owner: { intentHash: '0x' + 'ab'.repeat(32), sessionId: 'sess-a', index: 4 } });
        // Nothing of the refused reservation was written.
        expect(await s.nonceOwner('judge-wallet 60000 0xk', '1/1')).toBeUndefined();
        // Racing reservations of one slot: exactly one wins.
        const race = await Promise.all(Array.from({ length: 6 }, (_, i) => s.reserve!(`racer-${i}`, 2, [claim('judge-wallet 60000 0xk', '1/1')])));
        expect(race.filter((x) => x.ok)).toHaveLength(1);
      } finally {
        await env.dispose();
      }
    });
  });
}
