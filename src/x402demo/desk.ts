/**
 * The x402 desk's day: an agent that pays for market data with @x402/fetch through Tally's
 * {@link X402Runtime}, against a resource server and a facilitator on a local chain. Five
 * payments, in order: two admitted and settled (quote), one offer_drift (a client that pays
 * another requirement than the one offered: nothing sent), one whose settlement times out
 * (recorded UNKNOWN: the amount stays reserved), one refused over budget because the UNKNOWN
 * still holds its amount, and then the UNKNOWN reconciled from the chain's receipt (SETTLED).
 */
import { parseAbiItem, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { wrapFetchWithPayment, x402Client, type PaymentRequirements } from '@x402/fetch';
import { ExactEvmScheme, toClientEvmSigner } from '@x402/evm';
import { TallyError, type CanonicalObject, type SessionSpec } from '../protocol/index.js';
import { PaymentRefusedError, X402Runtime, receiptEvidence } from '../payments/index.js';
import { signMandateWithKey } from '../referee/index.js';
import type { Engine } from '../session/index.js';
import { chainClient, HARDHAT_KEYS, NETWORK, type Token } from './token.js';
import type { Listening } from './servers.js';

/** The desk's parties: Hardhat accounts #1 (the agent's wallet), #3 (the data vendor), #4 (the principal). */
export const X402_DESK = Object.freeze({
  agent: privateKeyToAccount(HARDHAT_KEYS[1]),
  vendor: privateKeyToAccount(HARDHAT_KEYS[3]).address as Address,
  principal: privateKeyToAccount(HARDHAT_KEYS[4]),
});

/** Prices and limits in the token's atomic units (6 decimals: 10000 is 0.01 TUSD). */
export const X402_PRICES = Object.freeze({ quote: '10000', tape: '10000', depth: '25000', cap: '25000', budget: '50000' });

/** The desk's spec: the agent's signer, a mandate signed by the principal, and the payment policy it authorises. */
export function x402DeskSpec(token: Address, now: number): SessionSpec {
  const { agent, principal } = X402_DESK;
  const spec: SessionSpec = {
    name: 'x402-desk',
    agents: { payer: agent.address },
    mandate: {
      version: 2,
      instance: 'tally-demo/x402-desk',
      principal: principal.address,
      operator: privateKeyToAccount(HARDHAT_KEYS[0]).address,
      executor: privateKeyToAccount(HARDHAT_KEYS[2]).address,
      actions: ['transfer'],
      markets: ['TUSD-ETH'],
      targets: [X402_DESK.vendor],
      caps: { size: '1', leverage: '1', slippage: '0.01' },
      quota: { cap: '10' },
      tx_cap: 10,
      starts_at: now - 60_000,
      expires_at: now + 86_400_000,
    } as CanonicalObject,
    payments: {
      version: 1,
      assets: [{ network: NETWORK, asset: token, decimals: 6, per_payment_cap: X402_PRICES.cap, budget: X402_PRICES.budget }],
      payees: [X402_DESK.vendor],
    },
  };
  return signMandateWithKey(spec, HARDHAT_KEYS[4]);
}

export interface DeskServers {
  readonly chainUrl: string;
  readonly token: Token;
  readonly quote: Listening;
  readonly tape: Listening;
  readonly depth: Listening;
  /** Holds the facilitator's next settlement until `release` (a slow facilitator). */
  hold(): void;
  release(): void;
}

/** What happened to each attempt, as the runtime saw it. */
export interface DeskStep {
  readonly what: string;
  readonly outcome: string;
}

function agentClient(token: Address, drift = false) {
  const policy = (_v: number, r: PaymentRequirements[]) => r.map((x) => ({ ...x, maxTimeoutSeconds: x.maxTimeoutSeconds + 1 }));
  return x402Client.fromConfig({
    schemes: [{ network: NETWORK, client: new ExactEvmScheme(toClientEvmSigner(X402_DESK.agent)) }],
    spendControls: { allowedAssets: [{ network: NETWORK, asset: token }] },
    ...(drift ? { policies: [policy] } : {}),
  });
}

async function attempt(what: string, steps: DeskStep[], pay: () => Promise<Response>): Promise<void> {
  try {
    const res = await pay();
    steps.push({ what, outcome: `HTTP ${res.status}` });
  } catch (e) {
    if (e instanceof PaymentRefusedError) steps.push({ what, outcome: `refused ${e.code}` });
    else if (e instanceof Error && e.name === 'TimeoutError') steps.push({ what, outcome: 'no answer in time (settlement UNKNOWN)' });
    else throw e;
  }
}

/** Records the desk's day into `sessionId` (opened with {@link x402DeskSpec}); returns each step. */
export async function runDesk(engine: Engine, sessionId: string, s: DeskServers, settleTimeoutMs = 2000): Promise<DeskStep[]> {
  const steps: DeskStep[] = [];
  const token = s.token.address;
  const data = (l: Listening) => `${l.url}/market-data`;
  // Settled payments get all the time a loaded machine needs; the held one times out on purpose.
  const rt = new X402Runtime({ engine, sessionId, agentId: 'payer', settleTimeoutMs: 60_000 });
  const pay = wrapFetchWithPayment(rt.fetch, agentClient(token));
  await attempt('quote', steps, () => pay(data(s.quote)));
  await attempt('quote again', steps, () => pay(data(s.quote)));
  await attempt('quote, paying a requirement it was not offered', steps, () => wrapFetchWithPayment(rt.fetch, agentClient(token, true))(data(s.quote)));
  await rt.flush();

  const described = await engine.describe(sessionId);
  if (!described.ok) throw new TallyError('TALLY_DEMO_DIVERGED', `cannot describe the x402 day: ${described.diagnostic}`);
  const slow = new X402Runtime({ engine, sessionId, agentId: 'payer', settleTimeoutMs, ordinal: described.nextOrdinal });
  const payer = wrapFetchWithPayment(slow.fetch, agentClient(token));
  s.hold();
  await attempt('tape (the facilitator is slow)', steps, () => payer(data(s.tape)));
  await attempt('depth (while the tape payment is UNKNOWN)', steps, () => payer(data(s.depth)));
  s.release();
  const held = slow.sent[0];
  if (!held || !held.ruling.admitted) throw new TallyError('TALLY_DEMO_DIVERGED', 'the held payment was not admitted');
  // The facilitator was only slow: its settlement lands on chain after the client gave up; the chain's receipt reconciles it.
  const client = chainClient(s.chainUrl);
  const event = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)');
  let logs: Awaited<ReturnType<typeof client.getLogs<typeof event>>> = [];
  for (let i = 0; i < 300 && logs.length === 0; i++) {
    logs = await client.getLogs({ address: token, event, args: { nonce: held.ruling.nonce as Hex }, fromBlock: 0n });
    if (logs.length === 0) await new Promise((r) => setTimeout(r, 100));
  }
  if (logs.length !== 1) throw new TallyError('TALLY_DEMO_CHAIN', 'the held settlement never reached the chain');
  slow.reconcile(held.ticket, receiptEvidence(await client.getTransactionReceipt({ hash: logs[0]!.transactionHash! })));
  await slow.flush();
  steps.push({ what: `reconcile ticket ${held.ticket} from the chain receipt`, outcome: 'reported' });
  return steps;
}
