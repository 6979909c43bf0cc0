/**
 * A mandate exists only by its principal (issue #27, seed 003 `principal =
 * msg.sender`): a version-2 mandate carries the principal's EIP-712 (or
 * EIP-191) signature over the exact spec it is sealed in; `open` refuses an
 * unsigned or wrongly signed one, typed, writing nothing; the referee refuses
 * to rule under one that got sealed anyway; and a version-1 (unsigned) day
 * sealed before the change still replays, with the rules it was ruled by.
 *
 * The EIP-712 digest is computed a second time here from the EIP-712 text
 * (keccak from @noble/hashes, encodeData written out by hand) and the
 * signature recovered with viem's own `recoverTypedDataAddress`.
 */
import { recoverMessageAddress, recoverTypedDataAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { toHex, type CanonicalObject, type SessionSpec } from '../../src/protocol/index.js';
import { readFileSync } from 'node:fs';
import { replay, type ReplayResult } from '../../src/receipt/index.js';
import {
  MANDATE_EIP191_PREFIX,
  checkMandateSignature,
  createRefereeRuler,
  judgeRequestBytes,
  mandateDigest,
  mandateSignedText,
  mandateTypedData,
  parseMandate,
  replayRuler,
  signMandate,
  signRedemption,
  signRelease,
  signTermination,
  actTypedData,
  transitionMessage,
  type Judge,
} from '../../src/referee/index.js';
import { Engine } from '../../src/session/index.js';
import { MemoryStore, type TranscriptStore } from '../../src/store/index.js';
import { carry, enc, frameTime, iso, openIntent, signed } from '../rules/fixtures.js';
import { naiveEip191Digest, naiveEip712Digest, sortedJson } from './naive-mandate.js';
import { Desk, INSTANCE, KEY_EXECUTOR, KEY_OPERATOR, KEY_OTHER, KEY_PRINCIPAL, judgedMandate, localJudge, mandate, principal, refereeSpec, ruling, signSpecSync, unsignedSpec } from './fixtures.js';

const dec = new TextDecoder();

let n = 1;
const propose = async (desk: Desk, over: Record<string, unknown> = {}) => carry(await signed(openIntent({ nonce: `s${n++}`, ttl: iso(frameTime(desk.ordinal) + 1_800_000), ...over })), 'trend up');

async function bundleOf(engine: Engine, sid: string): Promise<Buffer> {
  const fin = await engine.finalize(sid);
  if (!fin.ok) throw new Error(fin.message);
  const lines: Uint8Array[] = [];
  for await (const l of engine.exportEntries(sid)) lines.push(l);
  return Buffer.concat(lines.flatMap((l) => [l, enc.encode('\n')]));
}

describe('principal-signed mandates (version 2)', () => {
  it('the EIP-712 digest is the one EIP-712 defines (a second computation from its text), and viem recovers the principal', async () => {
    const spec = unsignedSpec('sig-712');
    const ours = mandateDigest(spec, 'eip712');
    expect(`0x${toHex(ours)}`).toBe(naiveEip712Digest(spec));
    expect(`0x${toHex(mandateDigest(spec, 'eip191'))}`).toBe(naiveEip191Digest(spec));
    expect(mandateSignedText(spec)).toBe(sortedJson(spec));
    const signedSpec = await signMandate(spec, KEY_PRINCIPAL);
    const sig = (signedSpec['mandate'] as { signature: { scheme: string; value: `0x${string}` } }).signature;
    expect(sig.scheme).toBe('eip712');
    expect(await recoverTypedDataAddress({ ...mandateTypedData(spec), signature: sig.value })).toBe(principal.address);
    // viem's signTypedData and the test's synchronous noble signing agree byte for byte (RFC 6979).
    expect(signedSpec).toEqual(signSpecSync(spec));
    expect(checkMandateSignature(signedSpec)).toEqual({ ok: true, scheme: 'eip712', signer: principal.address.toLowerCase() });
  });

  it('EIP-191 where a wallet cannot sign typed data: personal_sign over "tally/referee/v2|mandate|" ‖ the canonical spec', async () => {
    const spec = unsignedSpec('sig-191');
    const signedSpec = await signMandate(spec, KEY_PRINCIPAL, 'eip191');
    const value = (signedSpec['mandate'] as { signature: { value: `0x${string}` } }).signature.value;
    expect(await recoverMessageAddress({ message: MANDATE_EIP191_PREFIX + sortedJson(spec), signature: value })).toBe(principal.address);
    expect(checkMandateSignature(signedSpec)).toMatchObject({ ok: true, scheme: 'eip191' });
    expect(signedSpec).toEqual(signSpecSync(spec, KEY_PRINCIPAL, 'eip191'));
  });

  it('open refuses, typed and writing nothing, an unsigned mandate, another key\'s signature, and any byte of the spec changed after signing', async () => {
    const good = refereeSpec('sig-open');
    const m = good['mandate'] as CanonicalObject;
    const sigOf = (s: SessionSpec) => (s['mandate'] as CanonicalObject)['signature'];
    const cases: [string, SessionSpec, string][] = [
      ['unsigned', unsignedSpec('sig-open'), 'mandate_unsigned: spec.mandate.signature is required'],
      ['another key', signSpecSync(unsignedSpec('sig-open'), KEY_OTHER), 'mandate_bad_signature: the eip712 signature recovers to'],
      ['quota raised after signing', { ...good, mandate: { ...m, quota: { cap: '1000' } } }, 'mandate_bad_signature'],
      ['an agent added after signing', { ...good, agents: { ...(good['agents'] as CanonicalObject), mallory: '0x000000000000000000000000000000000000beef' } }, 'mandate_bad_signature'],
      ['another day (name) than signed', { ...good, name: 'sig-open-2' }, 'mandate_bad_signature'],
      ['scheme swapped', { ...good, mandate: { ...m, signature: { ...(sigOf(good) as CanonicalObject), scheme: 'eip191' } } }, 'mandate_bad_signature'],
      ['high-s twin', { ...good, mandate: { ...m, signature: { scheme: 'eip712', value: highS(String((sigOf(good) as CanonicalObject)['value'])) } } }, 'not a canonical signature'],
      ['signature not an object', { ...good, mandate: { ...m, signature: '0x00' } }, 'mandate_bad_signature: spec.mandate.signature must be exactly'],
      ['version 1 with a signature', { ...good, mandate: { ...m, version: undefined } as unknown as CanonicalObject }, 'signature needs spec.mandate.version 2'],
      ['version 3', { ...good, mandate: { ...m, version: 3 } }, 'spec.mandate.version must be 2 (a mandate without version is version 1'],
      ['version 1 (unsigned, as before)', unsignedSpec('sig-open', mandate({ version: undefined })), 'mandate_unsigned: spec.mandate needs "version": 2'],
    ];
    for (const [what, spec, message] of cases) {
      const store = new MemoryStore();
      const engine = new Engine({ store, ruler: createRefereeRuler({ store }) });
      const o = await engine.open(JSON.parse(JSON.stringify(spec)));
      expect(o, what).toMatchObject({ ok: false, diagnostic: 'malformed-entry', message: expect.stringContaining(message) });
      expect(await store.listSessions(), what).toEqual([]);
    }
    const store = new MemoryStore();
    expect(await new Engine({ store, ruler: createRefereeRuler({ store }) }).open(good)).toMatchObject({ ok: true, created: true });
  });

  it('sealed anyway (by an engine without the referee), an unsigned or forged mandate admits nothing: mandate_invalid', async () => {
    for (const spec of [unsignedSpec('sealed-unsigned'), signSpecSync(unsignedSpec('sealed-forged'), KEY_OTHER)]) {
      const store = new MemoryStore();
      const o = await createEngine({ store }).open(spec);
      if (!o.ok) throw new Error(o.message);
      const engine = new Engine({ store, ruler: createRefereeRuler({ store, judge: localJudge() }) });
      const f = await engine.frame({ sessionId: o.sessionId, ordinal: -1, time: frameTime(-1) });
      if (!f.ok) throw new Error(f.message);
      const bytes = carry(await signed(openIntent({ nonce: 'x1', ttl: iso(frameTime(-1) + 60_000) })));
      const t = await engine.turn({ sessionId: o.sessionId, ordinal: -1, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes } });
      expect(ruling(t as { ruling?: unknown })).toMatchObject({ intent: { admitted: true }, policy: { admitted: false, code: 'mandate_invalid', message: expect.stringMatching(/^mandate_(unsigned|bad_signature)/) } });
      expect(ruling(t as { ruling?: unknown }).ticket).toBeUndefined();
    }
  });

  it('a version-2 mandate sends seed 002\'s request by default (amount, thinking off) and replays; parseMandate reports it', async () => {
    let seen: Uint8Array | undefined;
    const base = localJudge();
    const judge: Judge = { ...base, ask: (q) => ((seen = q.requestBytes), base.ask(q)) };
    const store = new MemoryStore();
    const d = await Desk.open(refereeSpec('v2-request', judgedMandate()), { judge, store });
    expect(ruling(await d.answer(await propose(d))).verdict).toMatchObject({ admitted: true, format: 'verdict' });
    const req = JSON.parse(dec.decode(seen!)) as Record<string, unknown>;
    expect(req['chat_template_kwargs']).toEqual({ enable_thinking: false });
    expect(req['temperature']).toBe(0);
    expect(req['stream']).toBe(false);
    const user = JSON.parse((req['messages'] as { content: string }[])[1]!.content) as Record<string, unknown>;
    expect(user['amount']).toBe('1');
    expect(String(user['action']).split('|')[5]).toBe('1');
    const m = parseMandate(refereeSpec('v2-request', judgedMandate()));
    expect(m.ok && m.mandate).toMatchObject({ version: 2, judgeRequest: 'verdict-v2', answerShape: 'verdict' });
    expect(await replay([await bundleOf(d.engine, d.sid)], { ruler: replayRuler('auto', true).ruler })).toMatchObject({ ok: true, rulings: 1 });
  });
});

/** A replay result in the corpus's terms (as tests/conformance/rulings.test.ts reads it). */
function replayAnswer(r: ReplayResult): Record<string, unknown> {
  if (r.ok) return { ok: true, turns: r.turns, rulings: r.rulings };
  if (r.stage !== 'replay') return { ok: false, stage: r.stage, index: r.index, code: r.code };
  const d = r.divergences[0]!;
  const a = (d.kind === 'ruling-diverged' ? d.actual : undefined) as Record<string, { code?: string } | undefined> | undefined;
  const code = a?.['verdict']?.code ?? a?.['policy']?.code ?? a?.['intent']?.code;
  return { ok: false, stage: 'replay', index: d.index, kind: d.kind, ...(code === undefined ? {} : { code }) };
}

describe('principal acts are signed the same way (EIP-712 typed data, version 2)', () => {
  it('a termination, a release and a redemption signed as EIP-712 Act(string act) count; by another key, or an EIP-191 signature labelled eip712, they do not', async () => {
    const store = new MemoryStore();
    const d = await Desk.open(refereeSpec('acts-712'), { store });
    const t1 = ruling(await d.answer(await propose(d))).ticket!;
    const t2 = ruling(await d.answer(await propose(d))).ticket!;
    const ref = (t: { id: number; proof_hash: string }) => ({ instance: INSTANCE, session: d.sid, ticket: t.id, proofHash: t.proof_hash });
    const forged = await signTermination(KEY_OTHER, { instance: INSTANCE, session: d.sid }, 'eip712');
    const r = ruling(
      await d.answer('acts', {
        data: { referee: { redemptions: [await signRedemption(KEY_EXECUTOR, ref(t1), {}, 'eip712')], releases: [await signRelease(KEY_OPERATOR, 'operator', ref(t2), 'eip712')], terminate: forged } },
      }),
    );
    // The redemption's intent is wrong on purpose ({}): its signature passes, so it fails later, at intent_mismatch.
    expect(r.transitions).toEqual([
      { op: 'redeem', ticket: 1, ok: false, code: 'intent_mismatch', message: expect.any(String) },
      { op: 'release', ticket: 2, ok: true, by: 'operator' },
      { op: 'terminate', ok: false, code: 'bad_transition_signature', message: 'the termination is not signed by the mandate principal' },
    ]);
    const term = await signTermination(KEY_PRINCIPAL, { instance: INSTANCE, session: d.sid }, 'eip712');
    expect(term).toMatchObject({ scheme: 'eip712' });
    expect(await recoverTypedDataAddress({ ...actTypedData(transitionMessage({ op: 'terminate', instance: INSTANCE, session: d.sid })), signature: term.signature as `0x${string}` })).toBe(principal.address);
    expect(ruling(await d.answer('stop', { data: { referee: { terminate: term } } })).transitions).toEqual([{ op: 'terminate', ok: true }]);
    // The EIP-191 signature labelled eip712 is not the typed-data signature.
    const d2 = await Desk.open(refereeSpec('acts-712-b'));
    const plain = await signTermination(KEY_PRINCIPAL, { instance: INSTANCE, session: d2.sid });
    expect(ruling(await d2.answer('stop', { data: { referee: { terminate: { ...plain, scheme: 'eip712' } } } })).transitions).toMatchObject([{ op: 'terminate', ok: false, code: 'bad_transition_signature' }]);
    expect(ruling(await d2.answer('stop', { data: { referee: { terminate: { ...plain, scheme: 'eip191' } } } })).transitions).toMatchObject([{ op: 'terminate', ok: false, code: 'transition_malformed' }]);
  });
});

describe('version-1 days (sealed before mandates were signed) replay as they were ruled', () => {
  it('every day of the ruling corpus as the engine wrote it before this change (tests/referee/vectors/rulings-v1.json: unsigned mandates) replays exactly as it did', async () => {
    const corpus = JSON.parse(readFileSync(new URL('./vectors/rulings-v1.json', import.meta.url), 'utf8')) as { cases: { name: string; lines: string[]; spec: { mandate: Record<string, unknown> }; expect: { replay: unknown } }[] };
    expect(corpus.cases.length).toBeGreaterThan(40);
    const ruler = replayRuler('auto', true).ruler;
    for (const c of corpus.cases) {
      expect(c.spec.mandate['version'], c.name).toBeUndefined();
      expect(replayAnswer(await replay([enc.encode(c.lines.join('\n') + '\n')], { ruler })), c.name).toEqual(c.expect.replay);
    }
  });

  /** What an engine before the change wrote: an unsigned mandate, the version-1 request, either answer shape, tickets ending AT the ttl. */
  async function legacyDay(judge: Judge): Promise<Buffer> {
    const store: TranscriptStore = new MemoryStore();
    const engine = new Engine({ store, ruler: createRefereeRuler({ store, judge, legacyMandates: true }) });
    const o = await engine.open(unsignedSpec('legacy-v1', judgedMandate({ version: undefined })));
    if (!o.ok) throw new Error(o.message);
    let parent = o.sessionId;
    for (const [ord, ttlAt] of [[-1, frameTime(0)], [0, frameTime(2)]] as const) {
      const f = await engine.frame({ sessionId: o.sessionId, ordinal: ord, time: frameTime(ord) });
      if (!f.ok) throw new Error(f.message);
      const bytes = carry(await signed(openIntent({ nonce: `legacy-${ord}`, ttl: iso(ttlAt) })), 'trend up');
      const t = await engine.turn({ sessionId: o.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes } });
      if (!t.ok) throw new Error(t.message);
      parent = t.entryHash;
    }
    void parent;
    return bundleOf(engine, o.sessionId);
  }

  it('an unsigned day whose matrix answer was admitted under the verdict request, its ticket ending at the ttl, replays with the replay ruler; a live engine refuses to open it', async () => {
    const bundle = await legacyDay(localJudge({ format: 'matrix' }));
    const lines = dec.decode(bundle).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const turn = lines[2] as { ruling: { verdict: { admitted: boolean; format: string }; ticket: { expires_at: number } } };
    expect(turn.ruling.verdict).toMatchObject({ admitted: true, format: 'matrix' });
    expect(turn.ruling.ticket.expires_at).toBe(frameTime(0)); // version 1: the ticket ended AT the intent's ttl
    const request = judgeRequestBytes({ model: 'm', rules: ['r'], action: 'a|b|c|d|e|1|h', intent: {}, context: undefined });
    expect(dec.decode(request)).not.toContain('amount'); // version 1's request bytes are kept as they were
    expect(await replay([bundle], { ruler: replayRuler('auto', true).ruler })).toMatchObject({ ok: true, turns: 2, rulings: 2 });
    // The live referee's ruler is not the replay ruler: it refuses the same genesis.
    expect(await replay([bundle], { ruler: (s: TranscriptStore) => createRefereeRuler({ store: s }) })).toMatchObject({ ok: false, stage: 'replay' });
  });
});

/** The high-s twin (s' = n − s, v flipped) of a low-s signature. */
function highS(sig: string): string {
  const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const s = BigInt(`0x${sig.slice(66, 130)}`);
  const v = Number.parseInt(sig.slice(130), 16);
  return `${sig.slice(0, 66)}${(N - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}`;
}
