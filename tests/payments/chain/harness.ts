/**
 * The real parts of an x402 payment, on loopback, for the tests: the same parts `tally demo
 * --x402` runs (src/x402demo), one copy — a Hardhat 3 network in a child process, the EIP-3009
 * token of contracts/TallyUSD.sol deployed from its shipped artifact (which
 * tests/x402demo/token-artifact.test.ts proves equal to solc's compile of the source), a
 * facilitator built from @x402/core + @x402/evm, and a resource server protected by
 * @x402/express. Every port is ephemeral; `stop()` ends the chain process.
 *
 * The chain not starting is an error, never a skip: a test that needs it fails.
 */
import type { PublicClient } from 'viem';
import { startChain as startLocalChain } from '../../../src/x402demo/chain.js';
import { startFacilitator as startLocalFacilitator, startResource, type FacilitatorOptions, type Listening, type ResourceOptions } from '../../../src/x402demo/servers.js';
import { chainClient, deployToken as deployLocalToken, HARDHAT_KEYS, NETWORK, TOKEN_NAME, TOKEN_VERSION, type Token } from '../../../src/x402demo/token.js';

export { HARDHAT_KEYS, NETWORK, TOKEN_NAME, TOKEN_VERSION, startResource };
export type { FacilitatorOptions, Listening, ResourceOptions, Token };

export interface Chain {
  readonly url: string;
  readonly client: PublicClient;
  stop(): Promise<void>;
}

/** Starts the chain process and waits for its port (at most `timeoutMs`). */
export async function startChain(timeoutMs = 60_000): Promise<Chain> {
  const c = await startLocalChain({ timeoutMs });
  return { url: c.url, client: chainClient(c.url), stop: () => c.stop() };
}

/** Deploys the token from account #0 and mints `mint` atomic units to each of `holders`. */
export const deployToken = (chain: Chain, holders: Parameters<typeof deployLocalToken>[1], mint: bigint): Promise<Token> => deployLocalToken(chain.url, holders, mint);

/** A facilitator on the chain: account #2 pays the gas of every settlement. */
export const startFacilitator = (chain: Chain, options: FacilitatorOptions = {}): Promise<Listening> => startLocalFacilitator(chain.url, options);
