/**
 * A frame's data is encoded once (prepareFrame): the frame root and the entry's bytes are
 * written from that text. Held here to the general encoder (canonicalBytes of the whole entry,
 * frameRoot of the content) on random data.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalBytes, frameRoot, toHex, tryCanonicalJson, type CanonicalObject, type FrameEntry } from '../../src/protocol/index.js';
import { sha256 } from '../../src/codec/sha256.js';
import { frameEntryBytes, prepareFrame, prepareTurn } from '../../src/session/prepare.js';
import { rulingRow, stored } from '../../src/session/rows.js';

const HEX = 'a'.repeat(64);
const PARENT = '0123456789abcdef'.repeat(4);

describe('frame bytes from the data encoded once', () => {
  it('are canonicalBytes(entry), and the frame root is frameRoot(content), on random data (seed 0xf4a3e)', () => {
    fc.assert(
      fc.property(fc.option(fc.jsonValue({ maxDepth: 4 }), { nil: undefined }), fc.integer({ min: -1, max: 1e6 }), fc.integer({ min: 0, max: 2 ** 52 }), (data, ordinal, time) => {
        const p = prepareFrame({ sessionId: HEX, ordinal, time, data });
        const canonical = data === undefined || tryCanonicalJson(data, { level: 2 }).ok;
        if (!p.ok) {
          expect(canonical && JSON.stringify(data).length <= 131072).toBe(false);
          return;
        }
        const f = p.frame;
        const entry: FrameEntry = { kind: 'frame', session: HEX, ordinal, parent: PARENT, time, frameRoot: f.frameRoot, ...(f.data === undefined ? {} : { data: f.data }) };
        expect(frameEntryBytes(entry, f)).toEqual(canonicalBytes(entry as unknown as CanonicalObject));
        expect(f.frameRoot).toBe(toHex(frameRoot(sha256, data === undefined ? { ordinal, time } : { ordinal, time, data: data as CanonicalObject })));
      }),
      { seed: 0xf4a3e, numRuns: 500 },
    );
  });

  it('a ruled turn row is the general encoder’s row on random rulings and bytes (seed 0x7e4b1)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), fc.uint8Array({ maxLength: 64 }), fc.integer({ min: -1, max: 1e6 }), (ruling, bytes, ordinal) => {
        const p = prepareTurn({ sessionId: HEX, ordinal, parentHash: PARENT, frameRoot: PARENT, body: { kind: 'authored', bytes } });
        if (!p.ok) throw new Error(p.message);
        const entry = { ...p.turn.entry, ruling: ruling as CanonicalObject };
        if (!tryCanonicalJson(ruling, { level: 2 }).ok) {
          expect(() => rulingRow(3, entry)).toThrow();
          return;
        }
        const r = rulingRow(3, entry);
        expect(r.s.bytes).toEqual(canonicalBytes(entry as unknown as CanonicalObject));
        expect(r).toEqual(stored(3, entry));
      }),
      { seed: 0x7e4b1, numRuns: 500 },
    );
  });
});
