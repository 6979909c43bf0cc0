/**
 * The EIP-3009 token of contracts/TallyUSD.sol, deployed from its shipped compiled artifact
 * (token-artifact.ts, equal to the source's compile: tests/x402demo/token-artifact.test.ts), so
 * no Solidity is compiled at demo time.
 */
import { createPublicClient, createWalletClient, http, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { hardhat } from 'viem/chains';
import { TOKEN_ABI, TOKEN_BYTECODE } from './token-artifact.js';

/** Hardhat's and Anvil's public test keys (mnemonic "test test … junk"), accounts #0–#4: never for real money. */
export const HARDHAT_KEYS = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
] as const satisfies readonly Hex[];

/** The Hardhat network's CAIP-2 id. */
export const NETWORK = 'eip155:31337' as const;
export const TOKEN_NAME = 'Tally USD';
export const TOKEN_VERSION = '2';

/** A viem client of the chain at `url`. */
export function chainClient(url: string): PublicClient {
  return createPublicClient({ chain: hardhat, transport: http(url) }) as PublicClient;
}

export interface Token {
  readonly address: Address;
  readonly abi: typeof TOKEN_ABI;
  balanceOf(who: Address): Promise<bigint>;
}

/** Deploys the token from account #0 and mints `mint` atomic units to each of `holders`. */
export async function deployToken(url: string, holders: readonly Address[], mint: bigint): Promise<Token> {
  const client = chainClient(url);
  const wallet = createWalletClient({ account: privateKeyToAccount(HARDHAT_KEYS[0]), chain: hardhat, transport: http(url) });
  const hash = await wallet.deployContract({ abi: TOKEN_ABI, bytecode: TOKEN_BYTECODE, args: [TOKEN_NAME, TOKEN_VERSION] });
  const receipt = await client.waitForTransactionReceipt({ hash });
  const address = receipt.contractAddress!;
  for (const h of holders) {
    const tx = await wallet.writeContract({ address, abi: TOKEN_ABI, functionName: 'mint', args: [h, mint] });
    await client.waitForTransactionReceipt({ hash: tx });
  }
  return {
    address,
    abi: TOKEN_ABI,
    balanceOf: async (who) => (await client.readContract({ address, abi: TOKEN_ABI, functionName: 'balanceOf', args: [who] })) as bigint,
  };
}
