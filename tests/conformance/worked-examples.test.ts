/**
 * The worked examples of docs/PROTOCOL.md (§8 the golden day, §9 the signed
 * Intent, §10 the referee, §11.7 the receipt) give every value in full, and
 * each full hex value in them is re-derived here from the text itself (the
 * lines, payloads, anchors and responses it quotes), from the golden
 * transcript it names, and from the public test keys it names. A value the
 * text states that nothing re-derives — or an abbreviated hash — fails.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/codec/index.js';
import { eip191Digest, hashCanonicalPayload, signIntent, type IntentInput } from '../../src/intent/index.js';
import { entryHash, rfc6962Hasher, rootFromLeafHashes, taggedHash, toHex, type CanonicalObject } from '../../src/protocol/index.js';
import { actionLine, judgeRequestBytes, sha256Hex, signText, ticketAnchor, ticketProofHash, transitionMessage, verdictMessage } from '../../src/referee/index.js';

const ROOT = join(import.meta.dirname, '../..');
const doc = readFileSync(join(ROOT, 'docs/PROTOCOL.md'), 'utf8');
const transcript = readFileSync(join(ROOT, 'tests/golden/transcript.jsonl'));
const enc = new TextEncoder();
/** Public test keys the examples name: Anvil #0 (the intent signer), #5 (executor), #6 (judge); RFC 8032 TEST 1's seed. */
const ANVIL0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const ANVIL5 = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';
const ANVIL6 = '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e';
const RFC8032_TEST1_SEED = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';

/** The text from the heading starting `from` up to the next heading starting `to`. */
function section(from: string, to: string): string {
  const a = doc.indexOf(`\n${from}`);
  const b = doc.indexOf(`\n${to}`, a + 1);
  if (a < 0 || b < 0) throw new Error(`no section ${from}`);
  return doc.slice(a, b);
}
/** The fenced code blocks of a text, in order. */
const blocks = (text: string) => [...text.matchAll(/```\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
const HEX = /(?:0x)?[0-9a-fA-F]{40,}/g;

const s8 = section('## 8.', '## 9.');
const s9 = doc.slice(doc.indexOf('**Example** (`tests/intent/vectors/signed-intent.json`'), doc.indexOf('\n## 10.'));
const s10 = doc.slice(doc.indexOf('**Worked example** (`tests/referee/bytes.test.ts`)'), doc.indexOf('\n## 11.'));
const s117 = section('### 11.7', '## 12.');

async function derived(): Promise<Set<string>> {
  const out = new Set<string>();
  const add = (...vs: string[]) => vs.forEach((v) => out.add(v.toLowerCase()));
  // §8: the genesis line and frame-root preimage as quoted; every entry hash and tree root of the named transcript.
  const [genesis, preimage] = blocks(s8);
  add(toHex(entryHash(sha256, enc.encode(genesis!))));
  const pre = preimage!.split(' ‖ 0x00 ‖ ')[1]!;
  add(toHex(taggedHash(sha256, 'tally/v1/frame-root', enc.encode(pre))));
  add(toHex(taggedHash(sha256, 'tally/v1/authored', enc.encode('{"plan":"watch"}'))));
  const lines = transcript.toString('utf8').split('\n').filter((l) => l !== '').map((l) => enc.encode(l));
  const leaves = lines.map((l) => entryHash(sha256, l));
  const hasher = rfc6962Hasher(sha256);
  leaves.forEach((h) => add(toHex(h)));
  for (let i = 0; i < leaves.length; i++) for (let j = i + 1; j <= leaves.length; j++) add(toHex(rootFromLeafHashes(hasher, leaves.slice(i, j))));
  // §9: each payload as quoted (Tally's example, seed 000's) → hash, EIP-191 digest; signed by Anvil #0.
  add(privateKeyToAccount(ANVIL0).address);
  for (const payload of blocks(s9)) {
    add(hashCanonicalPayload(payload), '0x' + Buffer.from(eip191Digest(payload)).toString('hex'));
    add((await signIntent(JSON.parse(payload) as IntentInput, ANVIL0)).signature);
  }
  // §10: the anchor as quoted → proof hash; the redeem text signed by Anvil #5; the request rebuilt, the response as quoted, signed by Anvil #6.
  const [anchorText, redeem, response, signed] = blocks(s10);
  const anchor = JSON.parse(anchorText!) as { executor: string; instance: string; intent: Record<string, string>; session: string; ticket: number; weight: string };
  const { signature, ...fields } = anchor.intent;
  const intentHash = hashCanonicalPayload(JSON.stringify(Object.fromEntries(Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : 1)))));
  add(intentHash, signature!, anchor.executor, anchor.session);
  expect((await signIntent(fields as unknown as IntentInput, ANVIL0)).signature).toBe(signature);
  const proof = ticketProofHash(ticketAnchor({ instance: anchor.instance, session: anchor.session, ticket: anchor.ticket, executor: anchor.executor, weight: anchor.weight, intentHash, intent: anchor.intent as CanonicalObject }));
  add(proof, privateKeyToAccount(ANVIL5).address);
  expect(redeem).toBe(transitionMessage({ op: 'redeem', instance: anchor.instance, session: anchor.session, ticket: anchor.ticket, proofHash: proof }));
  add(await signText(ANVIL5, redeem!));
  const action = actionLine({ instance: anchor.instance, session: anchor.session, action: fields['action']!, market: fields['market'], size: fields['size']!, intentHash });
  const request = judgeRequestBytes({ model: 'tally-local-rules-v1', rules: ['Only long positions.'], action, intent: fields as CanonicalObject, context: 'BTC broke out' });
  add(sha256Hex(request), sha256Hex(enc.encode(response!)), privateKeyToAccount(ANVIL6).address);
  expect(signed).toBe(verdictMessage('tally-local-rules-v1', sha256Hex(request), sha256Hex(enc.encode(response!))));
  add(await signText(ANVIL6, signed!));
  // §11.7: the engine key's seed is an input.
  add(RFC8032_TEST1_SEED);
  return out;
}

describe('PROTOCOL.md worked examples (§8, §9, §10, §11.7)', () => {
  const parts = { '§8': s8, '§9': s9, '§10': s10, '§11.7': s117 };

  it('abbreviate no hash (no "abcd…1234")', () => {
    for (const [name, text] of Object.entries(parts)) expect(text.match(/[0-9a-f]{4,}…[0-9a-f]{2,}|0x…[0-9a-f]+/g) ?? [], name).toEqual([]);
  });

  it('every full hex value in them is re-derived from the text, the golden transcript and the named public keys', async () => {
    const known = await derived();
    const unexplained = Object.entries(parts).flatMap(([name, text]) => [...text.matchAll(HEX)].map((m) => m[0]).filter((h) => !known.has(h.toLowerCase())).map((h) => `${name}: ${h}`));
    expect(unexplained).toEqual([]);
    // And the check has teeth: each section states values (not just a few).
    for (const [name, text] of Object.entries(parts)) expect([...text.matchAll(HEX)].length, name).toBeGreaterThan(3);
  });

  it('§11.7: the base64 values decode to the hex values beside them', () => {
    const pairs = [...s117.matchAll(/^([A-Za-z0-9+/]{43}=)\s+([0-9a-f]{64})$/gm)];
    expect(pairs.length).toBe(5);
    for (const [, b64, hex] of pairs) expect(Buffer.from(b64!, 'base64').toString('hex')).toBe(hex);
  });
});
