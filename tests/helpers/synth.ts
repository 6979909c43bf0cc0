/**
 * A synthetic, valid bundle generator built directly on the protocol byte
 * rules (no engine), yielding 1 MiB chunks so a very long day can be streamed
 * without ever being held in memory.
 */
import { sha256 } from '../../src/codec/index.js';
import { Frontier, authoredHash, canonicalBytes, entryHash, frameRoot, rfc6962Hasher, toBase64, toHex, PROTOCOL_VERSION, type CanonicalObject } from '../../src/protocol/index.js';

const enc = new TextEncoder();

export async function* synthBundle(turns: number, chunkBytes = 1 << 20): AsyncGenerator<Uint8Array> {
  const frontier = new Frontier(rfc6962Hasher(sha256));
  let buf = new Uint8Array(chunkBytes);
  let used = 0;
  let head = '';
  let session = '';
  let index = 0;
  function* emit(entry: CanonicalObject): Generator<Uint8Array> {
    const bytes = canonicalBytes(entry);
    const h = entryHash(sha256, bytes);
    frontier.append(h);
    head = toHex(h);
    if (index === 0) session = head;
    index++;
    if (used + bytes.length + 1 > buf.length) {
      yield buf.subarray(0, used);
      buf = new Uint8Array(Math.max(chunkBytes, bytes.length + 1));
      used = 0;
    }
    buf.set(bytes, used);
    used += bytes.length;
    buf[used++] = 0x0a;
  }
  yield* emit({ kind: 'genesis', protocol: PROTOCOL_VERSION, spec: { name: 'synthetic', turns } });
  for (let ord = -1; ord < turns - 1; ord++) {
    const time = 1_700_000_000_000 + (ord + 1) * 1000;
    const data = { mid: String(100_000 + ord) };
    const root = toHex(frameRoot(sha256, { ordinal: ord, time, data }));
    yield* emit({ kind: 'frame', session, ordinal: ord, parent: head, time, data, frameRoot: root });
    const authored = enc.encode(`{"note":"turn ${ord}"}`);
    yield* emit({ kind: 'turn', session, ordinal: ord, parent: head, frameRoot: root, body: { kind: 'authored', bytes: toBase64(authored), hash: toHex(authoredHash(sha256, authored)) } });
  }
  yield* emit({ kind: 'finalize', session, parent: head, size: index, root: toHex(frontier.root()) });
  if (used > 0) yield buf.subarray(0, used);
}
