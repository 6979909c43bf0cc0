/**
 * inspectLine (with its whole-line fast paths for the commonest entry shapes
 * and the known-key-order canonical proof) against the context-free checks as
 * first written: decode, JSON.parse, the canonical re-encoding, parseEntry,
 * entry hash. Same verdict, code, message, entry and hash on engine-made lines
 * and on lines edited at the spots the fast paths look at.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/codec/index.js';
import { inspectLine, type LineInspection } from '../../src/protocol/chain.js';
import { bytesEqual, entryHash, LIMITS, parseEntry, tryCanonicalJson } from '../../src/protocol/index.js';
import { createEngine } from '../../src/session/index.js';

const dec = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const enc = new TextEncoder();

function reference(line: Uint8Array): LineInspection {
  if (line.length > LIMITS.entryBytes) return { ok: false, code: 'too-large', message: `entry exceeds ${LIMITS.entryBytes} bytes` };
  let text: string;
  try {
    text = dec.decode(line);
  } catch {
    return { ok: false, code: 'not-utf8', message: 'entry is not valid UTF-8' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, code: 'not-json', message: 'entry is not JSON' };
  }
  const canon = tryCanonicalJson(value);
  if (!canon.ok) return { ok: false, code: 'not-canonical', message: `entry is outside canonical JSON (${canon.problem.code} at ${canon.problem.path || '/'})` };
  // Raw bytes, not decoded text: a BOM or any other re-encoding is refused.
  if (!bytesEqual(enc.encode(canon.text), line)) return { ok: false, code: 'not-canonical', message: 'entry bytes are not the canonical encoding of their value' };
  const parsed = parseEntry(value);
  if (!parsed.ok) return { ok: false, code: 'bad-structure', message: parsed.reason };
  return { ok: true, entry: parsed.entry, hash: entryHash(sha256, line) };
}

// inspectLine appends the strict parser's precise reason, when it has one, to
// the step's message ("… (duplicate-key: …)"); the verdict is what is compared.
function plain(r: LineInspection): LineInspection {
  return r.ok ? r : { ...r, message: r.message.replace(/ \((?:bom|duplicate-key|lone-surrogate|too-deep|syntax|trailing-data|invalid-utf8): .*\)$/, '') };
}

async function dayLines(): Promise<string[]> {
  const engine = createEngine();
  const open = await engine.open({ name: 'inspect', day: 1 });
  if (!open.ok) throw new Error(open.message);
  const sid = open.sessionId;
  for (let ord = -1; ord < 6; ord++) {
    const f = await engine.frame({ sessionId: sid, ordinal: ord, time: 1000 + ord, ...(ord % 2 ? { data: { p: `${ord}` } } : {}) });
    if (!f.ok) throw new Error(f.message);
    const body = ord % 3 === 1 ? { kind: 'stand-down', failureClass: 'provider' } : { kind: 'authored', bytes: enc.encode(`a${ord}`.repeat(ord + 2)) };
    const t = await engine.turn({ sessionId: sid, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body });
    if (!t.ok) throw new Error(t.message);
  }
  await engine.finalize(sid);
  const out: string[] = [];
  for await (const l of engine.exportEntries(sid)) out.push(dec.decode(l));
  return out;
}

// Edits at the places the fast paths parse: numbers, digests, base64, key order, spacing, escapes.
const EDITS: ReadonlyArray<(s: string, k: number) => string> = [
  (s) => s,
  (s) => s.replace(/"ordinal":(-?\d+)/, '"ordinal":-0'),
  (s) => s.replace(/"ordinal":(-?\d+)/, '"ordinal":007'),
  (s) => s.replace(/"ordinal":(-?\d+)/, '"ordinal":-2'),
  (s) => s.replace(/"ordinal":(-?\d+)/, `"ordinal":${2 ** 40}`),
  (s) => s.replace(/"ordinal":(-?\d+)/, `"ordinal":${2 ** 40 + 1}`),
  (s) => s.replace(/"ordinal":(-?\d+)/, '"ordinal":1.0'),
  (s) => s.replace(/"ordinal":(-?\d+)/, '"ordinal":1e2'),
  (s) => s.replace(/"time":(\d+)/, '"time":99999999999999999'),
  (s) => s.replace(/"time":(\d+)/, `"time":${2 ** 53}`),
  (s) => s.replace(/"time":(\d+)/, '"time":-1'),
  (s) => s.replace(/"size":(\d+)/, '"size":0'),
  (s) => s.replace(/"size":(\d+)/, `"size":${2 ** 53 - 1}`),
  (s) => s.replace(/"size":(\d+)/, `"size":${2 ** 53}`),
  (s, k) => s.replace(/"parent":"([0-9a-f])/, `"parent":"${'ABCDEFx'[k % 7]}`),
  (s) => s.replace(/"session":"[0-9a-f]{64}"/, '"session":"abc"'),
  (s) => s.replace(/"bytes":"/, '"bytes":"\\u0041'),
  (s) => s.replace(/"bytes":"/, '"bytes":"-_'),
  (s) => s.replace(/"bytes":"[^"]*"/, '"bytes":""'),
  (s) => s.replace(/"failureClass":"provider"/, '"failureClass":"other"'),
  (s) => s.replace(/"kind":"turn"/, '"kind": "turn"'),
  (s) => s.replace(/^\{"body":(\{[^}]*\}),"frameRoot":("[0-9a-f]{64}")/, '{"frameRoot":$2,"body":$1'),
  (s) => s.replace(/\}$/, ',"ruling":{"a":1}}'),
  (s) => s.replace(/\}$/, ',"zzz":1}'),
  (s) => s.replace(/"frameRoot"/, '"frameroot"'),
  (s) => `\uFEFF${s}`, // a BOM: refused (raw bytes are compared, not decoded text)
  (s) => `${s} `,
];

describe('inspectLine', () => {
  it('agrees with the original checks on engine lines and edited lines (seed 0x1a5e)', async () => {
    const lines = await dayLines();
    let fast = 0;
    fc.assert(
      fc.property(fc.nat({ max: lines.length - 1 }), fc.nat({ max: EDITS.length - 1 }), fc.nat(), (i, e, k) => {
        const text = EDITS[e]!(lines[i]!, k);
        const bytes = enc.encode(text);
        const got = inspectLine(sha256, bytes);
        expect(plain(got)).toEqual(reference(bytes));
        if (got.ok) fast++;
      }),
      { seed: 0x1a5e, numRuns: 3000 },
    );
    expect(fast).toBeGreaterThan(100);
  });

  it('every edit on every line, exhaustively', async () => {
    const lines = await dayLines();
    for (const l of lines) for (let e = 0; e < EDITS.length; e++) {
      const bytes = enc.encode(EDITS[e]!(l, e));
      expect(plain(inspectLine(sha256, bytes))).toEqual(reference(bytes));
    }
  });
});
