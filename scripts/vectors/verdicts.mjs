// verdicts.json (PROTOCOL.md §10): judge verdicts and their EIP-191
// signatures over `<model>:<sha256(request)>:<sha256(response)>`, valid and
// invalid, and panel answers with their quorum outcome. Called by
// scripts/gen-vectors.mjs; deterministic (RFC 6979 signatures).
import { privateKeyToAccount } from 'viem/accounts';
import { canonicalPayload, intentHash, signIntent } from '../../dist/intent/index.js';
import { actionLine, assessVerdict, createLocalJudge, judgeRequestBytes, quorumOf, reverifyPanel, sha256Hex, signText, verdictMessage } from '../../dist/referee/index.js';
import { INTENT_KEYS } from './intents.mjs';
import { REFEREE_KEYS } from './rulings.mjs';

const A = (k) => privateKeyToAccount(k).address;
const enc = new TextEncoder();
const b64 = (b) => Buffer.from(b).toString('base64');
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const SESSION = 'fe51fb18d3305ab4354dd2ad78fc0719458c0fb898dc2b48b3fd09cbc9ef7d0d';

function highS(sig) {
  const b = Buffer.from(sig.slice(2), 'hex');
  const t = (N - BigInt('0x' + b.subarray(32, 64).toString('hex'))).toString(16).padStart(64, '0');
  return '0x' + b.subarray(0, 32).toString('hex') + t + (b[64] === 27 ? '1c' : '1b');
}

export async function verdictVectors() {
  const intent = await signIntent({ action: 'open', agent_id: 'alpha', nonce: '1', ttl: '2030-01-01T00:30:00.000Z', size: '2', market: 'BTC-PERP', side: 'long', leverage: '3', max_slippage: '0.01' }, INTENT_KEYS.alpha);
  const hash = intentHash(intent);
  const action = actionLine({ instance: 'desk-7', session: SESSION, action: 'open', market: 'BTC-PERP', size: '2', intentHash: hash });
  const rules = ['Only long positions.', 'Never trade ETH-PERP.'];
  const base = { rules, action, intent: JSON.parse(canonicalPayload(intent)), context: 'BTC broke out' };
  const model = 'judge-a';
  const request = judgeRequestBytes({ model, ...base });
  const requestSha256 = sha256Hex(request);
  const judge = A(REFEREE_KEYS.judge).toLowerCase();
  const content = (o) => (typeof o === 'string' ? o : JSON.stringify(o));
  const verdict = (v, reason = 'All 2 rules hold.', act = action) => content({ reason, verdict: v, action: act });
  /** The chat completion the local judge sends with content `c` for model `m` (its envelope; the signature is made separately). */
  const reply = async (c, m = model) => {
    const a = await createLocalJudge({ key: REFEREE_KEYS.judge, model: m, script: () => c }).ask({ request: { model: m, ...base }, requestBytes: judgeRequestBytes({ model: m, ...base }) });
    if (!a.ok) throw new Error(a.message);
    return a.response;
  };
  const signed = async (response, key = REFEREE_KEYS.judge, m = model, req = requestSha256) => signText(key, verdictMessage(m, req, sha256Hex(response)));

  const allow = await reply(verdict('ALLOW'));
  const allowSig = await signed(allow);
  const altered = enc.encode(Buffer.from(allow).toString('utf8').replace('All 2 rules hold.', 'All 2 rules hold!'));
  const matrix = (outcomes) => content({ assessments: outcomes.map(([outcome, certainty], index) => ({ index, outcome, certainty })) });
  const cases = [
    ['ALLOW signed by a trusted judge: admitted', allow, allowSig],
    ['DENY signed by a trusted judge: judge_denied', await reply(verdict('DENY', 'Rule 0 fails.')), null],
    ['signed by a key not in trusted: judge_untrusted_signer', allow, await signed(allow, REFEREE_KEYS.other)],
    ['reason altered after signing, signature kept (recovers another key): judge_untrusted_signer', altered, allowSig],
    ['signature over another request hash: judge_untrusted_signer', allow, await signed(allow, REFEREE_KEYS.judge, model, '0'.repeat(64))],
    ['signature over another model id: judge_untrusted_signer', allow, await signed(allow, REFEREE_KEYS.judge, 'judge-b')],
    ['high-s twin of the signature: judge_untrusted_signer', allow, highS(allowSig)],
    ['v = 0 spelling of the signature: judge_untrusted_signer', allow, allowSig.slice(0, -2) + (allowSig.endsWith('1b') ? '00' : '01')],
    ['not a signature: judge_untrusted_signer', allow, '0x1234'],
    ['duplicate verdict key (DENY then ALLOW): judge_unparsable', await reply('{"reason":"x","verdict":"DENY","verdict":"ALLOW","action":' + JSON.stringify(action) + '}'), null],
    ['keys out of the seed order (verdict first): judge_unparsable', await reply(content({ verdict: 'ALLOW', reason: 'ok', action })), null],
    ['reason of 281 code points: judge_unparsable', await reply(verdict('ALLOW', 'é'.repeat(281))), null],
    ['reason of 280 code points: admitted', await reply(verdict('ALLOW', 'é'.repeat(280))), null],
    ['lone surrogate escape in the reason: judge_unparsable', await reply('{"reason":"\\ud800","verdict":"ALLOW","action":' + JSON.stringify(action) + '}'), null],
    ['content not JSON: judge_unparsable', await reply('ALLOW!'), null],
    ['response with a BOM: judge_unparsable', Uint8Array.from([0xef, 0xbb, 0xbf, ...allow]), null],
    ['verdict for another action: judge_action_mismatch', await reply(verdict('ALLOW', 'ok', action.replace('|open|', '|close|'))), null],
    ['assessment matrix, every rule PASS and solid: admitted', await reply(matrix([['PASS', 'solid'], ['PASS', 'solid']])), null],
    ['assessment matrix with one rule PASS and moderate: judge_denied', await reply(matrix([['PASS', 'solid'], ['PASS', 'moderate']])), null],
    ['assessment matrix with one entry for two rules: judge_unparsable', await reply(matrix([['PASS', 'solid']])), null],
    ['operator-signed ALLOW under judges_independent: judge_untrusted_signer', allow, allowSig, { operatorSigned: true, independent: true }],
    ['operator-signed ALLOW without judges_independent: admitted', allow, allowSig, { operatorSigned: true }],
  ];
  const verdicts = [];
  for (const [name, response, sig, flags = {}] of cases) {
    const signature = sig ?? (await signed(response));
    const input = { model, requestSha256, response, signature, trusted: [judge], action, ruleCount: rules.length, ...flags };
    const r = assessVerdict(input);
    const expected = name.slice(name.lastIndexOf(': ') + 2); // every name ends in its outcome
    if ((r.admitted ? 'admitted' : r.code) !== expected) throw new Error(`verdict ${name}: expected ${expected}, got ${JSON.stringify(r)}`);
    verdicts.push({ name, model, requestSha256, response: b64(response), responseSha256: sha256Hex(response), signedText: verdictMessage(model, requestSha256, sha256Hex(response)), signature, trusted: [judge], action, ruleCount: rules.length, ...flags,
      expect: { admitted: r.admitted, ...(r.code ? { code: r.code } : {}), ...(r.signer ? { signer: r.signer } : {}), ...(r.decision ? { decision: r.decision } : {}), ...(r.format ? { format: r.format } : {}) } });
  }

  // ---- panels: every member's recorded answer, re-verified, then k of n
  const members = [
    { signer: A(REFEREE_KEYS.judge).toLowerCase(), model: 'judge-a' },
    { signer: A(REFEREE_KEYS.judge2).toLowerCase(), model: 'judge-b' },
    { signer: A(REFEREE_KEYS.other).toLowerCase(), model: 'judge-c' },
  ];
  const keyOf = [REFEREE_KEYS.judge, REFEREE_KEYS.judge2, REFEREE_KEYS.other];
  const answer = async (i, decision, key = keyOf[i]) => {
    const req = sha256Hex(judgeRequestBytes({ model: members[i].model, ...base }));
    const response = await reply(verdict(decision), members[i].model);
    return { judge: members[i].signer, model: members[i].model, request_sha256: req, response: b64(response), signature: await signed(response, key, members[i].model, req) };
  };
  const timeout = (i) => ({ judge: members[i].signer, model: members[i].model, request_sha256: sha256Hex(judgeRequestBytes({ model: members[i].model, ...base })), code: 'judge_unavailable', failure: 'timeout', message: 'no answer within 20000 ms' });
  const [a0, a1, a2] = [await answer(0, 'ALLOW'), await answer(1, 'ALLOW'), await answer(2, 'ALLOW')];
  const panelCases = [
    ['3 ALLOWs, quorum 2: admitted', 2, [a0, a1, a2]],
    ['2 ALLOWs and a DENY, quorum 2: admitted', 2, [a0, a1, await answer(2, 'DENY')]],
    ['1 ALLOW, a DENY and a timeout, quorum 2: judge_quorum_not_met', 2, [a0, await answer(1, 'DENY'), timeout(2)]],
    ['2 ALLOWs, quorum 3: judge_quorum_not_met', 3, [a0, a1, await answer(2, 'DENY')]],
    ['member b\'s answer signed by member a\'s key: not counted', 2, [a0, await answer(1, 'ALLOW', keyOf[0]), await answer(2, 'DENY')]],
    ['answers reordered: evidence invalid', 2, [a1, a0, a2]],
    ['an answer missing: evidence invalid', 2, [a0, a1]],
    ['an answer to another request: evidence invalid', 2, [a0, { ...a1, request_sha256: '0'.repeat(64) }, a2]],
  ];
  const panels = panelCases.map(([name, quorum, answers]) => {
    const panel = { members, quorum };
    const re = reverifyPanel(panel, base, answers, rules.length);
    const expect = typeof re === 'string' ? { ok: false, evidence: re } : (() => { const q = quorumOf(panel, re); return { ok: true, admitted: q.admitted, ...q.figures, answers: re.map((a) => ({ admitted: a.admitted, ...(a.code ? { code: a.code } : {}) })) }; })();
    return { name, members, quorum, answers, expect };
  });
  return {
    description: 'Judge verdicts (PROTOCOL.md §10, §14). request: base (rules, action line, the intent payload, context) with model judge-a; verdicts: a response (base64 chat completion) and an EIP-191 signature over signedText = <model>:<requestSha256>:<responseSha256>, read with trusted judges, the action line and the rule count (operatorSigned, independent: the signed_by "operator" label and judges_independent). expect: admitted, code, the recovered signer, decision and format. panels: members (signer, model; each its own request, model = the member\'s), quorum and recorded answers: re-verified in member order (evidence: why the record is refused) and the k-of-n outcome with each answer\'s admission.',
    request: { ...base, model, requestSha256, requestBytes: b64(request) },
    verdicts,
    panels,
  };
}
