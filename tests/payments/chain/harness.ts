/**
 * The real parts of an x402 payment, on loopback: a Hardhat 3 network in a child process
 * (node.mjs), the EIP-3009 token of contracts/TallyUSD.sol compiled by solc (npm) and deployed,
 * a facilitator built from @x402/core + @x402/evm serving /verify, /settle and /supported over
 * HTTP, and a resource server protected by @x402/express. Every port is ephemeral; `stop()`
 * closes the servers and ends the chain process.
 *
 * The chain not starting is an error, never a skip: a test that needs it fails.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { resolve } from 'node:path';
import express from 'express';
import solc from 'solc';
import {
  createPublicClient,
  createWalletClient,
  http,
  publicActions,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { hardhat } from 'viem/chains';
import { x402Facilitator } from '@x402/core/facilitator';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as FacilitatorExactEvm } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme as ServerExactEvm } from '@x402/evm/exact/server';
import { paymentMiddleware } from '@x402/express';

const root = resolve(import.meta.dirname, '../../..');

/** Hardhat's and Anvil's public test keys (mnemonic "test test … junk"), accounts #0–#4. */
export const HARDHAT_KEYS = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
] as const satisfies readonly Hex[];

export const NETWORK = 'eip155:31337' as const;
export const TOKEN_NAME = 'Tally USD';
export const TOKEN_VERSION = '2';

export interface Chain {
  readonly url: string;
  readonly client: PublicClient;
  stop(): Promise<void>;
}

/** Starts the chain process and waits for its port (at most `timeoutMs`). */
export async function startChain(timeoutMs = 60_000): Promise<Chain> {
  const child: ChildProcess = spawn(process.execPath, [resolve(import.meta.dirname, 'node.mjs')], {
    cwd: root,
    // Loopback only: no telemetry (it is off without a TTY anyway; this says so).
    env: { ...process.env, HARDHAT_DISABLE_TELEMETRY: 'true' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const port = await new Promise<number>((ok, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`local chain did not start in ${timeoutMs} ms: ${err}`)), timeoutMs);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const m = /listening (\d+)\n/.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(Number(m[1]));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`local chain exited with ${code} before listening: ${err}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const client = createPublicClient({ chain: hardhat, transport: http(url) }) as PublicClient;
  return {
    url,
    client,
    stop: () =>
      new Promise<void>((ok) => {
        if (child.exitCode !== null) return ok();
        child.once('exit', () => ok());
        child.stdin!.end();
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      }),
  };
}

export interface Compiled {
  readonly abi: Abi;
  readonly bytecode: Hex;
  readonly solcVersion: string;
}

let compiled: Compiled | undefined;

/** Compiles contracts/TallyUSD.sol with the solc of package.json (in-process, a few seconds). */
export function compileToken(): Compiled {
  if (compiled) return compiled;
  const input = {
    language: 'Solidity',
    sources: { 'TallyUSD.sol': { content: readFileSync(resolve(root, 'contracts/TallyUSD.sol'), 'utf8') } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'cancun',
      outputSelection: { '*': { TallyUSD: ['abi', 'evm.bytecode.object'] } },
    },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const c = out.contracts['TallyUSD.sol']!['TallyUSD']!;
  compiled = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}`, solcVersion: solc.version() };
  return compiled;
}

export interface Token {
  readonly address: Address;
  readonly abi: Abi;
  balanceOf(who: Address): Promise<bigint>;
}

/** Deploys the token from account #0 and mints `mint` atomic units to each of `holders`. */
export async function deployToken(chain: Chain, holders: readonly Address[], mint: bigint): Promise<Token> {
  const { abi, bytecode } = compileToken();
  const wallet = createWalletClient({ account: privateKeyToAccount(HARDHAT_KEYS[0]), chain: hardhat, transport: http(chain.url) });
  const hash = await wallet.deployContract({ abi, bytecode, args: [TOKEN_NAME, TOKEN_VERSION] });
  const receipt = await chain.client.waitForTransactionReceipt({ hash });
  const address = receipt.contractAddress!;
  for (const h of holders) {
    const tx = await wallet.writeContract({ address, abi, functionName: 'mint', args: [h, mint] });
    await chain.client.waitForTransactionReceipt({ hash: tx });
  }
  return {
    address,
    abi,
    balanceOf: async (who) => (await chain.client.readContract({ address, abi, functionName: 'balanceOf', args: [who] })) as bigint,
  };
}

export interface Listening {
  readonly url: string;
  close(): Promise<void>;
}

function listen(app: express.Express): Promise<Listening> {
  return new Promise((ok) => {
    const server: Server = app.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      ok({
        url: `http://127.0.0.1:${port}`,
        close: () => new Promise<void>((done) => { server.closeAllConnections(); server.close(() => done()); }),
      });
    });
  });
}

/** Facilitator hooks the tests use to stall or watch settlement. */
export interface FacilitatorOptions {
  /** Awaited before each settlement is sent (a test holds it to make the client time out). */
  beforeSettle?: () => Promise<void>;
}

/** A facilitator on the chain: account #2 pays the gas of every settlement. */
export async function startFacilitator(chain: Chain, options: FacilitatorOptions = {}): Promise<Listening & { readonly facilitator: x402Facilitator }> {
  const account = privateKeyToAccount(HARDHAT_KEYS[2]);
  const client = createWalletClient({ account, chain: hardhat, transport: http(chain.url) }).extend(publicActions);
  const signer = toFacilitatorEvmSigner({
    address: account.address,
    readContract: (a) => client.readContract(a as never),
    verifyTypedData: (a) => client.verifyTypedData(a as never),
    writeContract: (a) => client.writeContract(a as never),
    sendTransaction: (a) => client.sendTransaction(a as never),
    waitForTransactionReceipt: (a) => client.waitForTransactionReceipt(a),
    getCode: (a) => client.getCode(a),
  });
  const facilitator = new x402Facilitator().register(NETWORK, new FacilitatorExactEvm(signer));
  const app = express();
  app.use(express.json());
  app.get('/supported', (_req, res) => void res.json(facilitator.getSupported()));
  app.post('/verify', async (req, res) => {
    const { paymentPayload, paymentRequirements } = req.body as { paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements };
    res.json(await facilitator.verify(paymentPayload, paymentRequirements));
  });
  app.post('/settle', async (req, res) => {
    const { paymentPayload, paymentRequirements } = req.body as { paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements };
    await options.beforeSettle?.();
    res.json(await facilitator.settle(paymentPayload, paymentRequirements));
  });
  return { ...(await listen(app)), facilitator };
}

export interface ResourceOptions {
  readonly payTo: Address;
  readonly token: Token;
  /** Price of GET /market-data in atomic units. */
  readonly amount: string;
  readonly maxTimeoutSeconds?: number;
}

/** A resource server: GET /market-data costs `amount` of the token, paid by x402 `exact`. */
export async function startResource(facilitatorUrl: string, o: ResourceOptions): Promise<Listening> {
  const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(NETWORK, new ServerExactEvm());
  const app = express();
  app.use(
    paymentMiddleware(
      {
        'GET /market-data': {
          accepts: {
            scheme: 'exact',
            network: NETWORK,
            payTo: o.payTo,
            price: { amount: o.amount, asset: o.token.address, extra: { name: TOKEN_NAME, version: TOKEN_VERSION } },
            maxTimeoutSeconds: o.maxTimeoutSeconds ?? 120,
          },
          description: 'One snapshot of the desk market',
          mimeType: 'application/json',
        },
      },
      server,
    ),
  );
  app.get('/market-data', (_req, res) => void res.json({ market: 'TUSD-ETH', bid: '3120.5', ask: '3121.0' }));
  return listen(app);
}
