/**
 * Golden vector of the referee bytes (docs/PROTOCOL.md, "Referee"), cross-checked
 * by an independent assembly: node:crypto SHA-256, hand-written JSON, viem recovery.
 */
import { createHash } from 'node:crypto';
import { recoverMessageAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { intentHash, signIntent } from '../../src/intent/index.js';
import type { CanonicalObject } from '../../src/protocol/index.js';
import {
  actionLine,
  contextText,
  createLocalJudge,
  judgeRequestBytes,
  recoverText,
  sha256Hex,
  signText,
  ticketAnchor,
  ticketProofHash,
  transitionMessage,
  verdictMessage,
  verifyText,
} from '../../src/referee/index.js';
import { KEY_ALPHA } from '../rules/fixtures.js';
import { KEY_JUDGE } from './fixtures.js';

const SESSION = 'fe51fb18d3305ab4354dd2ad78fc0719458c0fb898dc2b48b3fd09cbc9ef7d0d';
const EXECUTOR = '0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc';
const node = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

async function vector() {
  const intent = await signIntent({ action: 'open', agent_id: 'alpha', nonce: '1', ttl: '2030-01-01T00:30:00Z', size: '2', market: 'BTC-PERP', side: 'long', leverage: '3', max_slippage: '0.01' }, KEY_ALPHA);
  return { intent, hash: intentHash(intent) };
}

describe('referee bytes: golden vector', () => {
  it('ticket proof hash = SHA-256("tally/referee/v1/ticket" ‖ 0x00 ‖ canonical anchor)', async () => {
    const { intent, hash } = await vector();
    expect(hash).toBe('0x0df6c88599291eed8eff7981597cba52a9f66a6fa7099269d13e9514c2aec441');
    const proof = ticketProofHash(ticketAnchor({ instance: 'desk-7', session: SESSION, ticket: 1, executor: EXECUTOR, weight: '2', intentHash: hash, intent: intent as unknown as CanonicalObject }));
    expect(proof).toBe('1aae78e305404e5df970df4abd3d1f25cc0a760afbbbee6d7fe04906c45a873c');
    // Independent: keys written in sorted order by hand, all values ASCII.
    const i = intent;
    const intentJson = `{"action":"${i.action}","agent_id":"${i.agent_id}","leverage":"3","market":"BTC-PERP","max_slippage":"0.01","nonce":"1","side":"long","signature":"${i.signature}","size":"2","ttl":"2030-01-01T00:30:00.000Z"}`;
    const anchor = `{"executor":"${EXECUTOR}","instance":"desk-7","intent":${intentJson},"intent_hash":"${hash}","protocol":"tally/referee/v1","session":"${SESSION}","ticket":1,"weight":"2"}`;
    expect(node(Buffer.concat([Buffer.from('tally/referee/v1/ticket'), Buffer.from([0]), Buffer.from(anchor)]))).toBe(proof);
    // Any field changes the hash (mutation).
    for (const over of [{ ticket: 2 }, { weight: '2.5' }, { instance: 'desk-8' }, { session: SESSION.replace('f', 'e') }, { executor: EXECUTOR.replace('9', '8') }]) {
      const other = ticketProofHash(ticketAnchor({ instance: 'desk-7', session: SESSION, ticket: 1, executor: EXECUTOR, weight: '2', intentHash: hash, intent: intent as unknown as CanonicalObject, ...over }));
      expect(other).not.toBe(proof);
    }
  });

  it('transition texts', () => {
    const proof = '1aae78e305404e5df970df4abd3d1f25cc0a760afbbbee6d7fe04906c45a873c';
    expect(transitionMessage({ op: 'redeem', instance: 'desk-7', session: SESSION, ticket: 1, proofHash: proof })).toBe(`tally/referee/v1|redeem|desk-7|${SESSION}|1|${proof}`);
    expect(transitionMessage({ op: 'release', instance: 'desk-7', session: SESSION, ticket: 1, proofHash: proof })).toBe(`tally/referee/v1|release|desk-7|${SESSION}|1|${proof}`);
    expect(transitionMessage({ op: 'terminate', instance: 'desk-7', session: SESSION })).toBe(`tally/referee/v1|terminate|desk-7|${SESSION}`);
  });

  it('judge request bytes, the local judge answer and the verdict signature', async () => {
    const { intent, hash } = await vector();
    const action = actionLine({ instance: 'desk-7', session: SESSION, action: 'open', market: 'BTC-PERP', size: '2', intentHash: hash });
    expect(action).toBe(`TALLY_ACTION_V1|desk-7|${SESSION}|open|BTC-PERP|2|${hash}`);
    const { signature: _sig, ...unsigned } = intent;
    const request = { model: 'tally-local-rules-v1', rules: ['Only long positions.'], action, intent: unsigned as unknown as CanonicalObject, context: contextText('BTC broke out') };
    const bytes = judgeRequestBytes(request);
    expect(sha256Hex(bytes)).toBe('0ff7bea9d74e4292e7657da99a15b6c337661127fecf2cc97143a718060f949e');
    expect(node(bytes)).toBe(sha256Hex(bytes));
    const text = new TextDecoder().decode(bytes);
    expect(text.startsWith('{"messages":[{"content":"TALLY_REFEREE_V1\\n')).toBe(true);
    expect(text.endsWith('"model":"tally-local-rules-v1","response_format":{"type":"json_object"},"stream":false,"temperature":0}')).toBe(true);

    const answer = await createLocalJudge({ key: KEY_JUDGE }).ask({ request, requestBytes: bytes });
    if (!answer.ok) throw new Error('no answer');
    const message = verdictMessage('tally-local-rules-v1', sha256Hex(bytes), sha256Hex(answer.response));
    expect(message).toBe(`tally-local-rules-v1:0ff7bea9d74e4292e7657da99a15b6c337661127fecf2cc97143a718060f949e:${GOLDEN_RESPONSE_SHA256}`);
    expect(sha256Hex(answer.response)).toBe(GOLDEN_RESPONSE_SHA256);
    expect(answer.signature).toBe(GOLDEN_VERDICT_SIGNATURE);
    const judge = privateKeyToAccount(KEY_JUDGE).address;
    expect(await recoverMessageAddress({ message, signature: answer.signature as `0x${string}` })).toBe(judge);
    expect(recoverText(message, answer.signature)).toBe(judge.toLowerCase());
  });

  it('EIP-191 recovery agrees with viem and refuses non-canonical signatures', async () => {
    const text = 'tally/referee/v1|terminate|desk-7|' + SESSION;
    const sig = await signText(KEY_JUDGE, text);
    expect(await recoverMessageAddress({ message: text, signature: sig as `0x${string}` })).toBe(privateKeyToAccount(KEY_JUDGE).address);
    expect(recoverText(text + ' ', sig)).not.toBe(privateKeyToAccount(KEY_JUDGE).address.toLowerCase());
    // High-s twin: s' = n − s, v flipped — malleable, refused.
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const s = BigInt('0x' + sig.slice(66, 130));
    const v = Number.parseInt(sig.slice(130), 16);
    const twin = sig.slice(0, 66) + (n - s).toString(16).padStart(64, '0') + (v === 27 ? '1c' : '1b');
    expect(recoverText(text, twin)).toBeNull();
    for (const bad of ['0x', sig.slice(0, -2), sig + '00', 42, null]) expect(recoverText(text, bad)).toBeNull();
    // verifyText (precomputed key after the first use) gives the same answers, first and second time.
    const judge = privateKeyToAccount(KEY_JUDGE).address.toLowerCase();
    for (let round = 0; round < 2; round++) {
      expect(verifyText(text, sig, judge)).toBe(true);
      expect(verifyText(text + ' ', sig, judge)).toBe(false);
      expect(verifyText(text, twin, judge)).toBe(false);
      expect(verifyText(text, sig, EXECUTOR)).toBe(false);
      for (const bad of ['0x', sig.slice(0, -2), 42, null]) expect(verifyText(text, bad, judge)).toBe(false);
    }
  });
});

const GOLDEN_RESPONSE_SHA256 = '5c2106b853085d35e67dde210fa977684d5bcead547664a137ea99160aa06a2c';
const GOLDEN_VERDICT_SIGNATURE = '0xbb8aab9ebe1a6e63b944cfac59ab107b32c669657e28f308e6429ae005b977ed06b139b8c40c47f54fcb7a05999517b44bf952ad2e237412cf186da308a2c1841b';
