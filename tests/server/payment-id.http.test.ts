/**
 * x402 `payment-identifier` semantics over real HTTP, against `tally serve` (the built CLI, a
 * SQLite store): the same id with another payload is refused with HTTP 409 and the typed code
 * (`payment-id-conflict`, `data.code` `payment_id_conflict`), recorded in the day, and an
 * identical retry gets the same answer; the same id with the same payload gets the recorded
 * answer (200: the engine's duplicate of the admitting turn).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalJson, toBase64, type CanonicalObject } from '../../src/protocol/index.js';
import { WIRE_ERRORS } from '../../src/server/vocabulary.js';
import { hashToken } from '../../src/server/auth.js';
import { agent, frameAt, paySpec, paymentRequired, payTurn, signPayment } from '../payments/fixtures.js';
import { authDoc, cleanup, ok, rpc, startServer, TOKENS, type ServerProc } from './helpers.js';

/** The payer's agent token: the session names its agents, so only their tokens author its turns. */
const PAYER = 'tly_test_agent_payer_0123456789abcdef01234';

let server: ServerProc | undefined;
afterAll(async () => {
  await server?.stop();
  cleanup();
});

const withId = (p: CanonicalObject, id: string): CanonicalObject => ({ ...p, extensions: { 'payment-identifier': { info: { required: true, id } } } });
const offer = (ordinal: number) => ({ x402: { offers: [{ id: `o-${ordinal}`, required: paymentRequired() }] } });

describe('payment_id_conflict on the wire', () => {
  it('is a 409 with the typed code, the same on retry; the same id and payload is the recorded answer', async () => {
    server = await startServer({ auth: authDoc([{ name: 'payer', role: 'agent', agents: ['payer'], signer: agent.address, sha256: hashToken(PAYER) }]) });
    const url = server.url;
    const call = (method: string, params: unknown) => rpc(url, method === 'session/turn' ? PAYER : TOKENS.runtime, method, params);
    const sid = ok(await call('session/open', { spec: paySpec('wire-payment-id') }))['sessionId'] as string;
    const frame = async (ordinal: number) => ok(await call('session/frame', { sessionId: sid, ordinal, time: frameAt(ordinal), data: offer(ordinal) }));
    const turn = (ordinal: number, f: Record<string, unknown>, payload: CanonicalObject) =>
      call('session/turn', { sessionId: sid, ordinal, parentHash: f['entryHash'], frameRoot: f['frameRoot'], body: { kind: 'authored', bytes: toBase64(payTurn(payload, { offer: `o-${ordinal}` })) } });

    const a = withId(await signPayment({ seq: 1 }), 'pay_0123456789abcdef');
    const b = withId(await signPayment({ seq: 2 }), 'pay_0123456789abcdef');
    const f1 = await frame(-1);
    const first = await turn(-1, f1, a);
    expect(first.status).toBe(200);
    const admitted = ok(first);
    expect(admitted).toMatchObject({ duplicate: false, ruling: { x402: { payment: { admitted: true, ticket: 1 } } } });

    // Same id, other payload: 409, the typed code, the turn and its refusal recorded.
    const f0 = await frame(0);
    const conflict = await turn(0, f0, b);
    expect(conflict.status).toBe(409);
    const row = WIRE_ERRORS.find((r) => r.type === 'payment-id-conflict')!;
    expect(conflict.body.error).toMatchObject({ code: row.code, data: { type: 'payment-id-conflict', retryable: false, code: 'payment_id_conflict', sessionId: sid, ordinal: 0, index: 4 } });
    const ruling = conflict.body.error!.data['ruling'] as { x402: { payment: Record<string, unknown> } };
    expect(ruling.x402.payment).toMatchObject({ admitted: false, code: 'payment_id_conflict', first: { nonce: 'pay_0123456789abcdef', payment_hash: (admitted['ruling'] as { x402: { payment: { payment_hash: string } } }).x402.payment.payment_hash, index: 2 } });

    // The identical retry: the same answer, byte for byte (but the JSON-RPC id).
    const again = await turn(0, f0, b);
    expect(again.status).toBe(409);
    expect(canonicalJson(again.body.error as never)).toBe(canonicalJson(conflict.body.error as never));

    // The refusal is in the day: events show the recorded turn with its ruling.
    const events = ok(await call('session/events', { sessionId: sid, after: 3 }));
    expect(JSON.stringify(events)).toContain('payment_id_conflict');

    // Same id, same payload: the recorded answer (the engine's duplicate of the admitting turn), 200.
    const same = await turn(-1, f1, a);
    expect(same.status).toBe(200);
    expect(ok(same)).toEqual({ ...admitted, duplicate: true });
  }, 120_000);
});
