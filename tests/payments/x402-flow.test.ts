/**
 * Priority one of issue #30, without Tally: the real x402 parts pay on a real local chain.
 * An agent (Hardhat account #1) pays with @x402/fetch for a resource behind @x402/express; the
 * facilitator built from @x402/core + @x402/evm verifies and settles transferWithAuthorization on
 * the Hardhat network; the settled transaction's receipt and the token balances prove it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventLogs, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactEvmScheme, toClientEvmSigner } from '@x402/evm';
import {
  HARDHAT_KEYS,
  NETWORK,
  deployToken,
  startChain,
  startFacilitator,
  startResource,
  type Chain,
  type Listening,
  type Token,
} from './chain/harness.js';

const agent = privateKeyToAccount(HARDHAT_KEYS[1]);
const payee = privateKeyToAccount(HARDHAT_KEYS[3]).address as Address;

let chain: Chain;
let token: Token;
let facilitator: Listening;
let resource: Listening;

beforeAll(async () => {
  chain = await startChain();
  token = await deployToken(chain, [agent.address], 5_000_000n);
  facilitator = await startFacilitator(chain);
  resource = await startResource(facilitator.url, { payTo: payee, token, amount: '10000' });
}, 120_000);

afterAll(async () => {
  await resource?.close();
  await facilitator?.close();
  await chain?.stop();
});

describe('x402 on a local chain, without Tally', () => {
  it('answers 402 with a PaymentRequired, then settles a paid request on chain', async () => {
    const unpaid = await fetch(`${resource.url}/market-data`);
    expect(unpaid.status).toBe(402);
    const offered = JSON.parse(Buffer.from(unpaid.headers.get('payment-required')!, 'base64').toString('utf8'));
    expect(offered.x402Version).toBe(2);
    expect(offered.accepts[0]).toMatchObject({ scheme: 'exact', network: NETWORK, amount: '10000', payTo: payee, asset: token.address });

    const before = { agent: await token.balanceOf(agent.address), payee: await token.balanceOf(payee) };
    const client = x402Client.fromConfig({
      schemes: [{ network: NETWORK, client: new ExactEvmScheme(toClientEvmSigner(agent)) }],
      spendControls: { allowedAssets: [{ network: NETWORK, asset: token.address }] },
    });
    const pay = wrapFetchWithPayment(fetch, client);
    const res = await pay(`${resource.url}/market-data`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ market: 'TUSD-ETH' });
    const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    expect(settled).toMatchObject({ success: true, network: NETWORK, payer: agent.address });
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);

    const receipt = await chain.client.getTransactionReceipt({ hash: settled.transaction as `0x${string}` });
    expect(receipt.status).toBe('success');
    const logs = parseEventLogs({ abi: token.abi, logs: receipt.logs });
    expect(logs.map((l) => l.eventName)).toEqual(['AuthorizationUsed', 'Transfer']);
    expect(await token.balanceOf(agent.address)).toBe(before.agent - 10000n);
    expect(await token.balanceOf(payee)).toBe(before.payee + 10000n);
  }, 60_000);
});
