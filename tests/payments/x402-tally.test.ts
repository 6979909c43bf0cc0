/**
 * Issue #30 end to end on a real chain: the agent pays with @x402/fetch through Tally. Each
 * payment is proposed (the 402's PaymentRequired is the frame, the signed PaymentPayload the
 * turn), ruled, sent only if admitted, settled by the facilitator on the Hardhat network, and the
 * settlement is recorded in the next frame; a settlement that times out is UNKNOWN until chain
 * evidence reconciles it. The day then verifies and replays byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAbiItem, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { PaymentRequirements } from '@x402/fetch';
import { ExactEvmScheme, toClientEvmSigner } from '@x402/evm';
import { encodeBundle, verifyBundle } from '../../src/codec/index.js';
import { PaymentRefusedError, X402Runtime, receiptEvidence, type PaymentsRuling } from '../../src/payments/index.js';
import type { CanonicalObject, SessionSpec } from '../../src/protocol/index.js';
import type { Engine } from '../../src/session/index.js';
import { mandate, signSpecSync } from '../referee/fixtures.js';
import { HARDHAT_KEYS, NETWORK, deployToken, startChain, startFacilitator, startResource, type Chain, type Listening, type Token } from './chain/harness.js';
import { entriesOf, paymentsEngine, replayPayments } from './replay.js';

const agent = privateKeyToAccount(HARDHAT_KEYS[1]);
const payee = privateKeyToAccount(HARDHAT_KEYS[3]).address as Address;
const stranger = privateKeyToAccount(HARDHAT_KEYS[4]).address as Address;

let chain: Chain;
let token: Token;
let facilitator: Listening;
let stall: Promise<void> | undefined;
let unstall: (() => void) | undefined;
const servers: Record<string, Listening> = {};

beforeAll(async () => {
  chain = await startChain();
  token = await deployToken(chain, [agent.address], 1_000_000n);
  facilitator = await startFacilitator(chain, { beforeSettle: () => stall ?? Promise.resolve() });
  servers['data'] = await startResource(facilitator.url, { payTo: payee, token, amount: '10000' });
  servers['dear'] = await startResource(facilitator.url, { payTo: payee, token, amount: '30000' });
  servers['elsewhere'] = await startResource(facilitator.url, { payTo: stranger, token, amount: '10000' });
}, 120_000);

afterAll(async () => {
  unstall?.();
  for (const s of Object.values(servers)) await s.close();
  await facilitator?.close();
  await chain?.stop();
});

function spec(now: number): SessionSpec {
  return signSpecSync({
    name: 'x402-desk',
    agents: { payer: agent.address },
    mandate: mandate({ starts_at: now - 60_000, expires_at: now + 86_400_000 }) as CanonicalObject,
    payments: {
      version: 1,
      assets: [{ network: NETWORK, asset: token.address, decimals: 6, per_payment_cap: '20000', budget: '50000' }],
      payees: [payee],
    },
  });
}

function agentClient(policy?: (r: PaymentRequirements[]) => PaymentRequirements[]) {
  return x402Client.fromConfig({
    schemes: [{ network: NETWORK, client: new ExactEvmScheme(toClientEvmSigner(agent)) }],
    spendControls: { allowedAssets: [{ network: NETWORK, asset: token.address }] },
    ...(policy ? { policies: [(_v: number, r: PaymentRequirements[]) => policy(r)] } : {}),
  });
}

const x402Of = (ruling: unknown): PaymentsRuling => ((ruling ?? {}) as { x402?: PaymentsRuling }).x402 ?? {};

describe('x402 through Tally on a local chain', () => {
  let engine: Engine;
  let sid: string;

  it('admits, sends and records a settled payment; refuses over the cap, to another payee and on offer drift without sending', async () => {
    engine = paymentsEngine();
    const o = await engine.open(spec(Date.now()));
    if (!o.ok) throw new Error(o.message);
    sid = o.sessionId;
    const rt = new X402Runtime({ engine, sessionId: sid, agentId: 'payer', settleTimeoutMs: 1500 });
    const pay = wrapFetchWithPayment(rt.fetch, agentClient());
    const start = { agent: await token.balanceOf(agent.address), payee: await token.balanceOf(payee) };

    const res = await pay(`${servers['data']!.url}/market-data`);
    expect(res.status).toBe(200);
    expect(rt.sent).toHaveLength(1);
    expect(rt.sent[0]!.ruling).toMatchObject({ admitted: true, ticket: 1, state: 'RESERVED', value: '10000', payer: agent.address.toLowerCase(), pay_to: payee.toLowerCase() });
    expect(await token.balanceOf(payee)).toBe(start.payee + 10000n);

    // Over the per-payment cap: refused before anything is signed onto the wire; the settlement of #1 rides in this frame.
    await expect(pay(`${servers['dear']!.url}/market-data`)).rejects.toThrow(/over_payment_cap/);
    // To a payee not on the allowlist.
    await expect(pay(`${servers['elsewhere']!.url}/market-data`)).rejects.toThrow(/payee_not_allowed/);
    // A client that pays another requirement than the one offered (valid yet wrong: issue #3500).
    const drifting = wrapFetchWithPayment(rt.fetch, agentClient((r) => r.map((x) => ({ ...x, maxTimeoutSeconds: x.maxTimeoutSeconds + 1 }))));
    await expect(drifting(`${servers['data']!.url}/market-data`)).rejects.toThrow(/offer_drift/);
    expect(rt.refused.map((r) => (r.admitted ? 'admitted' : r.code))).toEqual(['over_payment_cap', 'payee_not_allowed', 'offer_drift']);
    expect(await token.balanceOf(agent.address)).toBe(start.agent - 10000n);
    expect(await token.balanceOf(stranger)).toBe(0n);

    const entries = await entriesOf(engine, sid);
    const turns = entries.filter((e) => e.kind === 'turn');
    const settled = x402Of(turns[1]!.ruling);
    expect(settled.settlements).toEqual([{ ticket: 1, ok: true, state: 'SETTLED', transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) }]);
    expect(settled.budgets).toEqual([{ network: NETWORK, asset: token.address.toLowerCase(), budget: '50000', used: '10000', locked: '0', free: '40000' }]);
    const receipt = await chain.client.getTransactionReceipt({ hash: (settled.settlements![0] as { transaction: Hex }).transaction });
    expect(receipt.status).toBe('success');
    // The frame carries the PaymentRequired observed; the turn the PaymentPayload, accepted byte for byte one of its accepts.
    const frame = entries.find((e) => e.kind === 'frame' && e.ordinal === turns[0]!.ordinal) as unknown as { data: { x402: { offers: [{ required: { accepts: unknown[] } }] } } };
    const turn0 = JSON.parse(Buffer.from((turns[0]!.body as { bytes: string }).bytes, 'base64').toString('utf8'));
    expect(frame.data.x402.offers[0].required.accepts).toContainEqual(turn0.x402.payload.accepted);
  }, 120_000);

  it('records a settlement that times out as UNKNOWN, holds the amount, and reconciles it from the chain receipt', async () => {
    const rt = new X402Runtime({ engine, sessionId: sid, agentId: 'payer', settleTimeoutMs: 1500, ordinal: (await entriesOf(engine, sid)).filter((e) => e.kind === 'frame').length - 1 });
    const pay = wrapFetchWithPayment(rt.fetch, agentClient());
    stall = new Promise<void>((ok) => (unstall = ok));
    await expect(pay(`${servers['data']!.url}/market-data`)).rejects.toThrow();
    const ticket = rt.sent[0]!.ruling;
    expect(ticket).toMatchObject({ admitted: true, ticket: 2 });
    const unknown = x402Of((await rt.flush()).ruling);
    expect(unknown.settlements).toEqual([{ ticket: 2, ok: true, state: 'UNKNOWN' }]);
    expect(unknown.budgets![0]).toMatchObject({ used: '10000', locked: '10000', free: '30000' });
    // Asking for the resource again is a retry of ticket 2, linked to it: refused while 2 may still settle, and nothing is sent.
    await expect(pay(`${servers['data']!.url}/market-data`)).rejects.toThrow(/settlement_unknown/);
    expect(rt.sent).toHaveLength(1);

    // The facilitator was only slow: it settles after the client gave up.
    unstall!();
    stall = undefined;
    let logs: Awaited<ReturnType<typeof chain.client.getLogs>> = [];
    for (let i = 0; i < 50 && logs.length === 0; i++) {
      logs = await chain.client.getLogs({ address: token.address, event: parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)'), args: { nonce: ticket.admitted ? (ticket.nonce as Hex) : '0x' }, fromBlock: 0n });
      if (logs.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(logs).toHaveLength(1);
    const receipt = await chain.client.getTransactionReceipt({ hash: logs[0]!.transactionHash! });
    rt.reconcile(2, receiptEvidence(receipt));
    const reconciled = x402Of((await rt.flush()).ruling);
    expect(reconciled.settlements).toEqual([{ ticket: 2, ok: true, state: 'SETTLED', transaction: receipt.transactionHash.toLowerCase() }]);
    expect(reconciled.budgets![0]).toMatchObject({ used: '20000', locked: '0', free: '30000' });
    expect(await token.balanceOf(payee)).toBeGreaterThanOrEqual(20000n);
  }, 120_000);

  it('the day verifies and every payment ruling and lifecycle transition replays byte for byte', async () => {
    const fin = await engine.finalize(sid, {});
    expect(fin.ok).toBe(true);
    const lines: Uint8Array[] = [];
    for await (const l of engine.exportEntries(sid)) lines.push(l);
    const v = await verifyBundle([encodeBundle(lines)]);
    expect(v).toMatchObject({ ok: true });
    const entries = await entriesOf(engine, sid);
    expect(await replayPayments(entries)).toEqual({ ok: true });
    // An edited ruling is found: flip one payment admission's ticket state.
    const i = entries.findIndex((e) => e.kind === 'turn' && x402Of(e.ruling).payment?.admitted === true);
    const edited = structuredClone(entries);
    (edited[i] as unknown as { ruling: { x402: { payment: { value: string } } } }).ruling.x402.payment.value = '1';
    expect(await replayPayments(edited)).toMatchObject({ ok: false, index: i });
  }, 60_000);

  it('refused payments throw a typed error', () => {
    expect(new PaymentRefusedError(undefined).code).toBe('no_ruling');
  });
});
