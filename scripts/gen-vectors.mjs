#!/usr/bin/env node
// Generates the conformance corpus docs/vectors/ (PROTOCOL.md §14) from the
// built engine. Deterministic: no clock, no RNG — the same engine gives the
// same bytes. Run after `npm run build`:
//   node scripts/gen-vectors.mjs [outDir]
// tests/conformance/corpus.test.ts regenerates into a temp dir and fails if
// the committed files differ. Every invalid vector names the error its author
// intends; generation stops if the engine's verifier reports another one.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createEngine } from '../dist/index.js';
import { sha256, verifyBundle } from '../dist/codec/index.js';
import { formatTurnReceipt, openSessionCheckpoint, parsePrivateKey, signNote, verifyTurnReceipt } from '../dist/receipt/index.js';
import { intentVectors } from './vectors/intents.mjs';
import { rulingVectors } from './vectors/rulings.mjs';
import { toolCallVectors } from './vectors/tool-calls.mjs';
import { mandateVectors } from './vectors/mandates.mjs';
import { verdictVectors } from './vectors/verdicts.mjs';
import { cosignatureVectors } from './vectors/cosignatures.mjs';
import { engineLogVectors } from './vectors/engine-log.mjs';
import { ap2Vectors } from './vectors/ap2.mjs';
import { x402Vectors } from './vectors/x402.mjs';
import { sdJwtExampleVectors } from './vectors/sd-jwt-examples.mjs';
import { evidenceVectors } from './vectors/evidence.mjs';
import { canonicalJson, canonicalBytes, entryHash, inclusionProofFromLeafHashes, parseStrictJson, rfc6962Hasher, rootFromLeafHashes, toHex, CHAIN_ERROR_CODES, STRICT_JSON_CODES } from '../dist/protocol/index.js';

const CORPUS_VERSION = 'tally/1-corpus/1';
const out = process.argv[2] ? process.argv[2].replace(/\/?$/, '/') : new URL('../docs/vectors/', import.meta.url).pathname;
mkdirSync(out, { recursive: true });
const enc = new TextEncoder();
const dec = new TextDecoder();
const hex = (b) => Buffer.from(b).toString('hex');
const write = (name, value) => writeFileSync(out + name, JSON.stringify({ version: CORPUS_VERSION, ...value }, null, 2) + '\n');

// ---------------------------------------------------------------- canonical JSON (§2, §2.1)
/** A byte string is accepted when it parses strictly and its raw bytes equal the canonical re-encoding. */
function judgeCanonical(bytes) {
  const p = parseStrictJson(bytes);
  if (!p.ok) return { ok: false, code: p.code };
  let text;
  try {
    text = canonicalJson(p.value);
  } catch {
    return { ok: false, code: 'not-canonical' };
  }
  return hex(enc.encode(text)) === hex(bytes) ? { ok: true } : { ok: false, code: 'not-canonical' };
}
const nest = (n, inner = '1') => '['.repeat(n) + inner + ']'.repeat(n);
const acceptCases = [
  ['empty object', '{}'], ['empty array', '[]'], ['empty string', '""'], ['true', 'true'], ['false', 'false'],
  ['zero', '0'], ['negative', '-1'], ['max safe integer', '9007199254740991'], ['min safe integer', '-9007199254740991'],
  ['key order by UTF-16 code units (U+FF61 after U+1F600 whose high surrogate is D83D)', '{"\u{1F600}":1,"\uff61":2}'],
  ['key order: shorter prefix first, upper case before lower', '{"A":1,"a":2,"aa":3,"b":4}'],
  ['escapes: quote, backslash, b t n f r', '"\\"\\\\\\b\\t\\n\\f\\r"'],
  ['other C0 controls as lowercase \\u00xx', '"\\u0000\\u0001\\u000b\\u000e\\u001f"'],
  ['literal: slash, DEL, U+0085, U+2028, U+2029, U+FEFF inside a string, non-ASCII, astral', '"/\u007f\u0085\u2028\u2029\ufeffé✓\u{1F600}"'],
  ['nested containers', '{"a":[true,{"b":[]}],"c":{}}'],
  ['64 levels (the limit)', nest(64)],
];
const refuseCases = [
  ['BOM before the text', [0xef, 0xbb, 0xbf, ...enc.encode('{}')], 'bom'],
  ['invalid UTF-8 (lone continuation byte)', [0x22, 0x80, 0x22], 'invalid-utf8'],
  ['overlong UTF-8 for "/"', [0x22, 0xc0, 0xaf, 0x22], 'invalid-utf8'],
  ['UTF-8 encoded surrogate ED A0 80', [0x22, 0xed, 0xa0, 0x80, 0x22], 'invalid-utf8'],
  ['duplicate key', '{"a":1,"a":1}', 'duplicate-key'],
  ['duplicate key, different values (no last-one-wins)', '{"verdict":"DENY","verdict":"ALLOW"}', 'duplicate-key'],
  ['lone high surrogate escape', '"a\\ud800"', 'lone-surrogate'],
  ['lone low surrogate escape', '"a\\udfff"', 'lone-surrogate'],
  ['65 levels', nest(65), 'too-deep'],
  ['trailing data', '{} {}', 'trailing-data'],
  ['syntax: trailing comma', '[1,]', 'syntax'],
  ['syntax: single quotes', "{'a':1}", 'syntax'],
  ['null is not a canonical value', '{"a":null}', 'not-canonical'],
  ['fraction', '1.5', 'not-canonical'],
  ['1.0 for 1', '1.0', 'not-canonical'],
  ['exponent', '1e2', 'not-canonical'],
  ['-0', '-0', 'not-canonical'],
  ['unsafe integer', '9007199254740992', 'not-canonical'],
  ['leading zero', '01', 'trailing-data'],
  ['plus sign', '+1', 'syntax'],
  ['keys out of order', '{"b":1,"a":2}', 'not-canonical'],
  ['keys ordered by code point instead of UTF-16 code units', '{"\uff61":2,"\u{1F600}":1}', 'not-canonical'],
  ['whitespace after a colon', '{"a": 1}', 'not-canonical'],
  ['whitespace before the text', ' {}', 'not-canonical'],
  ['escaped letter \\u0061', '"\\u0061"', 'not-canonical'],
  ['escaped slash \\/', '"\\/"', 'not-canonical'],
  ['upper-case hex escape \\u001F', '"\\u001F"', 'not-canonical'],
  ['\\u0008 instead of \\b', '"\\u0008"', 'not-canonical'],
  ['\\u000a instead of \\n', '"\\u000a"', 'not-canonical'],
  ['escaped U+2028', '"\\u2028"', 'not-canonical'],
  ['escaped non-ASCII \\u00e9', '"\\u00e9"', 'not-canonical'],
  ['escaped surrogate pair instead of the literal character', '"\\ud83d\\ude00"', 'not-canonical'],
  ['raw control character in a string', '"a\u0001"', 'syntax'],
];
const canonical = {
  description: 'Canonical JSON (PROTOCOL.md §2, §2.1, §14). accept: byte strings that are their own canonical encoding. refuse: byte strings that must be refused; lineCode (normative) is what a bundle verifier reports for a line of these bytes (§5 step 1), parserCode (informative) the strict parser refusal code of the reference implementation, or not-canonical when the bytes parse but are not the canonical re-encoding.',
  accept: acceptCases.map(([name, text]) => {
    const bytes = enc.encode(text);
    const r = judgeCanonical(bytes);
    if (!r.ok) throw new Error(`canonical accept case refused: ${name}: ${r.code}`);
    return { name, hex: hex(bytes) };
  }),
  // (A one-line bundle of accepted bytes passes the line step and fails later: bad-structure or not-genesis at index 0.)
  refuse: await Promise.all(refuseCases.map(async ([name, input, code]) => {
    const bytes = typeof input === 'string' ? enc.encode(input) : Uint8Array.from(input);
    const r = judgeCanonical(bytes);
    if (r.ok || r.code !== code) throw new Error(`canonical refuse case ${name}: expected ${code}, got ${JSON.stringify(r)}`);
    // The code a bundle verifier reports for a line of these bytes (index 0 of a one-line bundle).
    const line = await verifyBundle([bytes, enc.encode('\n')]);
    if (line.ok || line.index !== 0 || !['not-utf8', 'not-json', 'not-canonical'].includes(line.code)) throw new Error(`canonical refuse case ${name} as a line: ${JSON.stringify(line)}`);
    return { name, hex: hex(bytes), lineCode: line.code, parserCode: code };
  })),
};
for (const c of STRICT_JSON_CODES) if (!canonical.refuse.some((v) => v.parserCode === c)) throw new Error(`no canonical vector for ${c}`);
write('canonical.json', canonical);

// ---------------------------------------------------------------- a reference day
const engine = createEngine();
const spec = { name: 'corpus-day', day: '2026-12-01', params: { wakes: 2, unicode: 'café ✓ \u{1F600}' } };
const open = await engine.open(spec);
const sid = open.sessionId;
const frames = [
  { ordinal: -1, time: 1796169600000, data: { kind: 'open', prices: { 'BTC-PERP': '97000.5' } } },
  { ordinal: 0, time: 1796169660000 },
  { ordinal: 1, time: 1796169660000, data: [] },
];
const bodies = [
  { kind: 'authored', bytes: enc.encode('{"plan":"watch"}') },
  { kind: 'stand-down', failureClass: 'provider' },
  { kind: 'authored', bytes: new Uint8Array([0x00, 0xff, 0x0a, 0x22, 0x5c]) },
];
for (let i = 0; i < frames.length; i++) {
  const f = await engine.frame({ sessionId: sid, ...frames[i] });
  const t = await engine.turn({ sessionId: sid, ordinal: frames[i].ordinal, parentHash: f.entryHash, frameRoot: f.frameRoot, body: bodies[i] });
  if (!t.ok) throw new Error(t.message);
}
const fin = await engine.finalize(sid, { summary: 'corpus' });
if (!fin.ok) throw new Error(fin.message);
const lines = [];
for await (const l of engine.exportEntries(sid)) lines.push(l);
const golden = readFileSync(new URL('../tests/golden/transcript.jsonl', import.meta.url));

// ---------------------------------------------------------------- entry hashes per kind (§3, §4)
const tagged = (tag, data) => hex(sha256(Uint8Array.from([...enc.encode(tag), 0, ...data])));
const hashCases = lines.map((l, i) => {
  const e = JSON.parse(dec.decode(l));
  const v = { name: `${e.kind}${e.kind === 'frame' ? (e.data === undefined ? ' without data' : ' with data') : ''}${e.kind === 'turn' ? ` (${e.body.kind})` : ''} (line ${i})`, kind: e.kind, line: dec.decode(l), entryHash: toHex(entryHash(sha256, l)) };
  if (e.kind === 'frame') {
    const pre = canonicalJson({ ...(e.data === undefined ? {} : { data: e.data }), ordinal: e.ordinal, time: e.time });
    v.frameRootPreimage = pre;
    v.frameRoot = tagged('tally/v1/frame-root', enc.encode(pre));
  }
  if (e.kind === 'turn' && e.body.kind === 'authored') {
    const bytes = Buffer.from(e.body.bytes, 'base64');
    v.authoredHex = hex(bytes);
    v.authoredHash = tagged('tally/v1/authored', bytes);
  }
  if (e.kind === 'finalize') v.root = toHex(rootFromLeafHashes(rfc6962Hasher(sha256), lines.slice(0, i).map((x) => entryHash(sha256, x))));
  return v;
});
write('entries.json', { description: 'Entry hashes per entry kind (PROTOCOL.md §3, §4): entryHash = hex(SHA-256(0x00 ‖ utf8(line))); frames give the frame-root preimage and frameRoot, authored turns the authored bytes and their tagged hash, the seal the root over the entries before it.', cases: hashCases });

// ---------------------------------------------------------------- bundles (§5)
/** Re-links lines after an edit: later entries get the new session id and parents, a seal its size and root. */
function relink(ls, from = 1) {
  const res = ls.slice(0, from);
  const hashes = res.map((l) => entryHash(sha256, l));
  for (let i = from; i < ls.length; i++) {
    const v = JSON.parse(dec.decode(ls[i]));
    if (v.kind !== 'genesis') {
      v.session = toHex(hashes[0]);
      v.parent = toHex(hashes[i - 1]);
    }
    if (v.kind === 'finalize') {
      v.size = i;
      v.root = toHex(rootFromLeafHashes(rfc6962Hasher(sha256), hashes));
    }
    const b = canonicalBytes(v);
    res.push(b);
    hashes.push(entryHash(sha256, b));
  }
  return res;
}
const join = (ls, terminated = true) => {
  const parts = ls.map((l) => Buffer.from(l).toString('latin1'));
  return Buffer.from(parts.join('\n') + (terminated ? '\n' : ''), 'latin1');
};
const edit = (i, f) => lines.map((l, j) => (j === i ? f(l) : l));
const editJson = (i, f) => edit(i, (l) => { const v = JSON.parse(dec.decode(l)); f(v); return canonicalBytes(v); });
const s = (l) => dec.decode(l);
const b = (str) => enc.encode(str);
const last = lines.length - 1;
const Z = '0'.repeat(64);

const valid = [
  { name: 'golden day (tests/golden/transcript.jsonl)', bytes: golden },
  { name: 'corpus day: frame without data, empty data array, stand-down, raw authored bytes', bytes: join(lines) },
  { name: 'unsealed day, verified with requireSealed false', bytes: join(lines.slice(0, last)), options: { requireSealed: false } },
  { name: 'unsealed day ending on an unanswered frame, requireSealed false', bytes: join(lines.slice(0, last - 1)), options: { requireSealed: false } },
  { name: 'genesis only, requireSealed false', bytes: join(lines.slice(0, 1)), options: { requireSealed: false } },
  { name: 'genesis and seal (no frame)', bytes: join(relink([lines[0], lines[last]])) },
  { name: 'pinned session id, size and receipt root', bytes: join(lines), options: { pin: { sessionId: sid, size: fin.receipt.size, receiptRoot: fin.receipt.receiptRoot } } },
  { name: 'spec extension agents: 5 is not validated by a bundle verifier (§4.1)', bytes: join(relink(editJson(0, (v) => (v.spec.agents = 5)), 1)) },
  { name: 'spec name of whitespace that ECMAScript trim does not remove (U+0085)', bytes: join(relink(editJson(0, (v) => (v.spec.name = '\u0085')), 1)) },
  { name: 'empty artifacts object on the seal is accepted (§4.4)', bytes: join(editJson(last, (v) => (v.artifacts = {}))) },
  { name: 'empty ruling object on a turn is accepted (§4.3)', bytes: join(relink(editJson(2, (v) => (v.ruling = {})), 3)) },
];
const invalid = [
  ['empty', 'empty file', new Uint8Array(0), 0],
  ['too-large', 'line 1 longer than 1 MiB', null, 1],
  ['not-utf8', 'byte 0xff in line 1', join(edit(1, (l) => { const c = Uint8Array.from(l); c[c.length - 3] = 0xff; return c; })), 1],
  ['not-json', 'BOM before the genesis line (re-linked)', join(relink(edit(0, (l) => Uint8Array.from([0xef, 0xbb, 0xbf, ...l])), 1)), 0],
  ['not-json', 'BOM before the seal line', join(edit(last, (l) => Uint8Array.from([0xef, 0xbb, 0xbf, ...l]))), last],
  ['not-json', 'a truncated line', join(edit(1, (l) => l.slice(0, 20))), 1],
  ['not-canonical', 'space after a colon on line 1', join(edit(1, (l) => b(s(l).replace('":', '": ')))), 1],
  ['not-canonical', 'duplicate key on the genesis (re-linked)', join(relink(edit(0, (l) => b(s(l).replace('{"kind":"genesis",', '{"kind":"genesis","kind":"genesis",'))), 1)), 0],
  ['not-canonical', 'escaped lone surrogate in the spec name (re-linked)', join(relink(edit(0, (l) => b(s(l).replace('"corpus-day"', '"corpus-day\\ud800"'))), 1)), 0],
  ['not-canonical', '\\u0061 for a in line 1', join(edit(1, (l) => b(s(l).replace('"kind":"frame"', '"kind":"fr\\u0061me"')))), 1],
  ['not-canonical', 'frame data nesting past level 64 (entry = level 1)', join(relink(editJsonRaw(1, 64), 2)), 1],
  ['bad-structure', 'unknown key on the seal', join(editJson(last, (v) => (v.extra = 1))), last],
  ['bad-structure', 'spec name only whitespace (ECMAScript trim)', join(relink(editJson(0, (v) => (v.spec.name = ' \ufeff\t')), 1)), 0],
  ['bad-structure', 'ruling that is not an object', join(relink(editJson(2, (v) => (v.ruling = [])), 3)), 2],
  ['not-genesis', 'first line is a frame', join(lines.slice(1)), 0],
  ['wrong-session', 'frame with another session id', join(editJson(1, (v) => (v.session = Z))), 1],
  ['broken-link', 'frame with another parent', join(editJson(1, (v) => (v.parent = Z))), 1],
  ['unexpected-entry', 'second genesis', join(relink([lines[0], lines[0], ...lines.slice(1)], 1).map((l, i) => (i === 1 ? lines[0] : l))), 1],
  ['unexpected-entry', 'two frames in a row (turn -1 removed, re-linked)', join(relink([...lines.slice(0, 2), ...lines.slice(3)], 2)), 2],
  ['unexpected-entry', 'seal while a frame is pending', join(relink([...lines.slice(0, last - 1), lines[last]], last - 1)), last - 1],
  ['bad-ordinal', 'first frame with ordinal 0', join(relink(editJson(1, (v) => { v.ordinal = 0; v.frameRoot = tagged('tally/v1/frame-root', b(canonicalJson({ data: v.data, ordinal: 0, time: v.time }))); }), 2)), 1],
  ['time-regressed', 'frame time before the previous frame', join(relink(editJson(3, (v) => { v.time = 1; v.frameRoot = tagged('tally/v1/frame-root', b(canonicalJson({ ordinal: v.ordinal, time: 1 }))); }), 4)), 3],
  ['bad-frame-root', 'frame root of other content', join(relink(editJson(1, (v) => (v.frameRoot = Z)), 2)), 1],
  ['bad-authored-bytes', 'non-canonical base64 (unused bits set)', join(relink(editJson(2, (v) => (v.body.bytes = v.body.bytes.replace(/Q==$/, 'R=='))), 3)), 2],
  ['bad-authored-hash', 'authored hash of other bytes', join(relink(editJson(2, (v) => (v.body.hash = Z)), 3)), 2],
  ['bad-seal-size', 'seal size one less', join(editJson(last, (v) => (v.size = last - 1))), last],
  ['bad-seal-root', 'seal root of nothing', join(editJson(last, (v) => (v.root = Z))), last],
  ['after-seal', 'an entry after the seal', join([...lines, lines[1]]), lines.length],
  ['not-sealed', 'no seal (index = the seal\'s missing index, n)', join(lines.slice(0, last)), last],
  ['missing-newline', 'last line without 0x0A', join(lines, false), last],
  ['pin-mismatch', 'another pinned receipt root', join(lines), last, { pin: { receiptRoot: Z } }],
  ['pin-mismatch', 'another pinned session id (index 0)', join(lines), 0, { pin: { sessionId: Z } }],
  ['pin-mismatch', 'another pinned size', join(lines), last, { pin: { size: 3 } }],
];
function editJsonRaw(i, depth) {
  return edit(i, (l) => {
    const v = JSON.parse(dec.decode(l));
    let d = 1;
    for (let k = 0; k < depth; k++) d = [d];
    v.data = d; // data is level 2, so `depth` nested arrays reach level depth + 1 (65: refused)
    v.frameRoot = Z;
    return b(canonicalJsonLoose(v));
  });
}
/** Canonical spelling without the depth limit (to build a too-deep line). */
function canonicalJsonLoose(v) {
  if (Array.isArray(v)) return '[' + v.map(canonicalJsonLoose).join(',') + ']';
  if (v !== null && typeof v === 'object') return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canonicalJsonLoose(v[k])).join(',') + '}';
  return JSON.stringify(v);
}
/** Parts: a bundle is the concatenation of its parts; a part is {hex} or {repeat, times} (utf8 text repeated). */
function partsOf(bytes) {
  return [{ hex: hex(bytes) }];
}
const bundleVectors = [];
for (const v of valid) {
  const r = await verifyBundle([v.bytes], v.options ?? {});
  if (!r.ok) throw new Error(`valid bundle refused: ${v.name}: ${r.index} ${r.code} ${r.message}`);
  bundleVectors.push({ name: v.name, parts: partsOf(v.bytes), ...(v.options ? { options: v.options } : {}), expect: { ok: true, sessionId: r.sessionId, size: r.size, receiptRoot: r.receiptRoot, sealed: r.sealed } });
}
for (const [code, name, bytes, index, options] of invalid) {
  let parts;
  let data;
  if (code === 'too-large') {
    const prefix = s(lines[0]) + '\n{"data":"';
    parts = [{ hex: hex(b(prefix)) }, { repeat: 'a', times: 1048576 }, { hex: hex(b('"}\n')) }];
    data = Buffer.concat([b(prefix), Buffer.alloc(1048576, 'a'), b('"}\n')]);
  } else {
    parts = partsOf(bytes);
    data = bytes;
  }
  const r = await verifyBundle([data], options ?? {});
  if (r.ok || r.code !== code || r.index !== index) throw new Error(`invalid bundle ${name}: expected ${index} ${code}, got ${JSON.stringify(r)}`);
  bundleVectors.push({ name, parts, ...(options ? { options } : {}), expect: { ok: false, index, code } });
}
for (const c of CHAIN_ERROR_CODES) if (!bundleVectors.some((v) => v.expect.code === c)) throw new Error(`no bundle vector for ${c}`);
write('bundles.json', { description: 'Whole bundles (PROTOCOL.md §5, §14). A bundle is the concatenation of its parts ({hex} bytes, or {repeat, times}: the UTF-8 of repeat, times times). options: requireSealed (default true) and pin. expect: a valid result, or the first error index and code (§14.1, first error).', cases: bundleVectors });

// ---------------------------------------------------------------- signed checkpoints and turn receipts (§11.2–§11.4)
const rg = JSON.parse(readFileSync(new URL('../tests/receipt/golden/receipt.json', import.meta.url), 'utf8'));
const key = parsePrivateKey(rg.engine.privateKey);
const vkey = rg.engine.verifierKey;
const cpText = rg.checkpoint.slice(0, rg.checkpoint.lastIndexOf('\n\n') + 1);
const [origin, , rootB64] = cpText.split('\n');
const sigLine = rg.checkpoint.slice(rg.checkpoint.lastIndexOf('\n\n') + 2);
const keyIdBytes = Buffer.from(sigLine.trim().split(' ').pop(), 'base64').subarray(0, 4);
const line = (name, payload) => `\u2014 ${name} ${Buffer.from(payload).toString('base64')}\n`;
const noteCases = [
  ['the golden receipt (engine name tally.example/golden contains "/": the origin splits at its last "/")', rg.checkpoint, { ok: true }],
  ['an extension line with DEL (0x7F) and C1 U+0085: allowed and ignored', signNote(`${cpText}ext \u007f \u0085\n`, [key]), { ok: true }],
  ['an extension line with 0x01: a control character', signNote(cpText, [key]).replace(cpText, `${cpText}ext\u0001\n`), { ok: false, code: 'malformed-note' }],
  ['a second signature line of the pinned key with a wrong signature: skipped, not verified', rg.checkpoint + line('tally.example/golden', Buffer.concat([keyIdBytes, Buffer.alloc(64)])), { ok: true }],
  ['the first signature line of the pinned key wrong, the second right: bad-signature', cpText + '\n' + line('tally.example/golden', Buffer.concat([keyIdBytes, Buffer.alloc(64)])) + sigLine, { ok: false, code: 'bad-signature' }],
  ['an unknown key whose payload is 5 bytes (key ID and one byte): kept as unverified', rg.checkpoint + line('witness.example', [1, 2, 3, 4, 5]), { ok: true }],
  ['an unknown key whose payload is 4 bytes: malformed', rg.checkpoint + line('witness.example', [1, 2, 3, 4]), { ok: false, code: 'malformed-note' }],
  ['size 0 parses (it commits to no entry; matching it to a bundle is refused)', signNote(`${origin}\n0\n${Buffer.from(sha256(new Uint8Array(0))).toString('base64')}\n`, [key]), { ok: true }],
  ['size with a leading zero', signNote(`${origin}\n010\n${rootB64}\n`, [key]), { ok: false, code: 'bad-size' }],
  ['origin naming another engine than the signer', signNote(`other.example/${sid}\n1\n${rootB64}\n`, [key]), { ok: false, code: 'origin-not-signer' }],
  ['no signature of a pinned key', signNote(cpText, [parsePrivateKey(rg.grader.privateKey)]), { ok: false, code: 'no-pinned-signature' }],
].map(([name, note, want]) => {
  const r = openSessionCheckpoint(note, [vkey]);
  if (r.ok !== want.ok || (!r.ok && r.code !== want.code)) throw new Error(`checkpoint case ${name}: expected ${JSON.stringify(want)}, got ${JSON.stringify(r)}`);
  return { name, note, expect: r.ok ? { ok: true, engineName: r.checkpoint.engineName, sessionId: r.checkpoint.sessionId, size: r.checkpoint.size, root: r.checkpoint.root } : { ok: false, code: r.code } };
});
const tr = rg.turnReceipt4;
/** Receipts of other entries of the golden day, and mutations (index ±1, a bit flipped, a hash removed, the entry edited). */
function moreReceipts() {
  const gl = golden.toString('utf8').split('\n').filter((l) => l !== '').map((l) => enc.encode(l));
  const leaves = gl.map((l) => entryHash(sha256, l));
  const hasher = rfc6962Hasher(sha256);
  const receipt = (index, o = {}) => formatTurnReceipt({ index: o.index ?? index, proof: o.proof ?? inclusionProofFromLeafHashes(hasher, leaves, index, leaves.length), signedCheckpoint: rg.checkpoint, entryBytes: o.entry ?? gl[index] });
  const p4 = inclusionProofFromLeafHashes(hasher, leaves, 4, leaves.length);
  const flipped = p4.map((h, i) => (i === 1 ? Uint8Array.from(h, (x, j) => (j === 0 ? x ^ 1 : x)) : h));
  const frame = JSON.parse(dec.decode(gl[3]));
  frame.time += 1;
  return [
    ['the genesis (entry 0): its leaf hash is the session id', receipt(0), { ok: true }],
    ['the seal (entry 9, the last)', receipt(9), { ok: true }],
    ['a frame (entry 3)', receipt(3), { ok: true }],
    ['the genesis bytes claimed at index 1', receipt(0, { index: 1, proof: inclusionProofFromLeafHashes(hasher, leaves, 1, leaves.length) }), { ok: false, code: 'wrong-position' }],
    ['a turn claimed at index 0', receipt(4, { index: 0, proof: inclusionProofFromLeafHashes(hasher, leaves, 0, leaves.length) }), { ok: false, code: 'wrong-position' }],
    ['index equal to the size', receipt(4, { index: 10, proof: p4 }), { ok: false, code: 'index-out-of-range' }],
    ['one bit of a proof hash flipped', receipt(4, { proof: flipped }), { ok: false, code: 'root-mismatch' }],
    ['a proof hash removed', receipt(4, { proof: p4.slice(0, -1) }), { ok: false, code: 'wrong-proof-size' }],
    ['a frame edited (time + 1, frame root recomputed)', receipt(3, { entry: canonicalBytes({ ...frame, frameRoot: tagged('tally/v1/frame-root', b(canonicalJson({ ...(frame.data === undefined ? {} : { data: frame.data }), ordinal: frame.ordinal, time: frame.time }))) }) }), { ok: false, code: 'root-mismatch' }],
    ['a frame edited, its frame root kept', receipt(3, { entry: canonicalBytes(frame) }), { ok: false, code: 'bad-frame-root' }],
    ['no extra line (a plain tlog-proof)', receipt(4).replace(/^extra .*\n/m, ''), { ok: false, code: 'missing-entry' }],
    ['a checkpoint signed by another key', receipt(4).replace(rg.checkpoint, signNote(cpText, [parsePrivateKey(rg.grader.privateKey)])), { ok: false, code: 'no-pinned-signature' }],
  ];
}
const swap = (t) => { const ls = t.split('\n'); [ls[1], ls[2]] = [ls[2], ls[1]]; return ls.join('\n'); };
const proofCases = [
  ['the golden single-turn receipt of entry 4', tr, { ok: true }],
  ['index with a leading zero', tr.replace('\nindex 4\n', '\nindex 04\n'), { ok: false, code: 'bad-index' }],
  ['index line before the extra line', swap(tr), { ok: false }],
  ['another index', tr.replace('\nindex 4\n', '\nindex 5\n'), { ok: false }],
  ...moreReceipts(),
].map(([name, text, want]) => {
  const r = verifyTurnReceipt(text, { verifiers: [vkey] });
  if (r.ok !== want.ok || (want.code && r.code !== want.code)) throw new Error(`turn receipt case ${name}: expected ${JSON.stringify(want)}, got ${JSON.stringify(r)}`);
  return { name, text, expect: r.ok ? { ok: true, index: r.index, sessionId: r.checkpoint.sessionId, size: r.checkpoint.size } : { ok: false, stage: r.stage, code: r.code } };
});
write('receipts.json', {
  description: 'Signed session checkpoints (PROTOCOL.md §11.2, §11.3, §14.1) opened with verifierKeys, and single-turn receipts (§11.4) verified with them. Keys: tests/receipt/golden/receipt.json (RFC 8032 TEST 1 and 2 seeds). Witness cosignatures are in cosignatures.json.',
  verifierKeys: [vkey],
  checkpoints: noteCases,
  turnReceipts: proofCases,
});

// ---------------------------------------------------------------- intents, rulings, verdicts, cosignatures (§9, §10, §12.1)
const intents = await intentVectors();
write('intents.json', intents);
const rulings = await rulingVectors();
write('rulings.json', rulings);
const toolCalls = await toolCallVectors();
write('tool-calls.json', toolCalls);
const mandates = mandateVectors();
write('mandates.json', mandates);
const verdicts = await verdictVectors();
write('verdicts.json', verdicts);
const cosignatures = cosignatureVectors();
write('cosignatures.json', cosignatures);
const engineLog = await engineLogVectors();
write('engine-log.json', engineLog);

// ---------------------------------------------------------------- AP2 mandates (§16)
write('ap2.json', await ap2Vectors());

// ---------------------------------------------------------------- x402 payments (§17)
const x402 = await x402Vectors();
write('x402.json', x402);
// ---------------------------------------------------------------- the specs' own SD-JWT examples (§16.12)
write('sd-jwt-examples.json', sdJwtExampleVectors());

// ---------------------------------------------------------------- evidence packs, AP2 and x402 (§16.9, §17.8)
write('evidence.json', await evidenceVectors());

console.log(`wrote ${canonical.accept.length + canonical.refuse.length} canonical, ${hashCases.length} entry, ${bundleVectors.length} bundle, ${intents.signed.length + intents.validations.length} intent, ${rulings.cases.length} ruling, ${mandates.cases.length} mandate, ${verdicts.verdicts.length + verdicts.panels.length} verdict, ${cosignatures.cases.length} cosignature, ${engineLog.leaves.accept.length + engineLog.leaves.refuse.length + engineLog.paths.accept.length + engineLog.paths.refuse.length + engineLog.log.tiles.length + engineLog.days.cases.length} engine-log vectors`);
