/**
 * The two x402 servers of a payment day, on loopback at ephemeral ports: a facilitator built from
 * @x402/core + @x402/evm that verifies and settles on the local chain (/verify, /settle,
 * /supported), and a resource server protected by @x402/express. These packages are optional
 * peer dependencies: this module is loaded only through `loadX402Demo` (deps.ts), which names
 * what to install when they are missing.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createWalletClient, http, publicActions, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { hardhat } from 'viem/chains';
import { x402Facilitator } from '@x402/core/facilitator';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as FacilitatorExactEvm } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme as ServerExactEvm } from '@x402/evm/exact/server';
import { paymentMiddleware } from '@x402/express';
import { HARDHAT_KEYS, NETWORK, TOKEN_NAME, TOKEN_VERSION, type Token } from './token.js';

export interface Listening {
  readonly url: string;
  close(): Promise<void>;
}

function listen(app: express.Express): Promise<Listening> {
  return new Promise((ok, fail) => {
    const server: Server = app.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      ok({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
    server.once('error', fail);
  });
}

/** Facilitator hooks: a demo or test holds settlement to make the client time out. */
export interface FacilitatorOptions {
  /** Awaited before each settlement is sent. */
  readonly beforeSettle?: () => Promise<void>;
}

/** A facilitator on the chain at `chainUrl`: account #2 pays the gas of every settlement. */
export async function startFacilitator(chainUrl: string, options: FacilitatorOptions = {}): Promise<Listening> {
  const account = privateKeyToAccount(HARDHAT_KEYS[2]);
  const client = createWalletClient({ account, chain: hardhat, transport: http(chainUrl) }).extend(publicActions);
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
  return listen(app);
}

export interface ResourceOptions {
  readonly payTo: Address;
  readonly token: Pick<Token, 'address'>;
  /** Price of GET `path` in atomic units. */
  readonly amount: string;
  /** The paid path (default /market-data). */
  readonly path?: string;
  readonly description?: string;
  readonly maxTimeoutSeconds?: number;
}

/** A resource server: GET `path` costs `amount` of the token, paid by x402 `exact`. */
export async function startResource(facilitatorUrl: string, o: ResourceOptions): Promise<Listening> {
  const path = o.path ?? '/market-data';
  const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(NETWORK, new ServerExactEvm());
  const app = express();
  app.use(
    paymentMiddleware(
      {
        [`GET ${path}`]: {
          accepts: {
            scheme: 'exact',
            network: NETWORK,
            payTo: o.payTo,
            price: { amount: o.amount, asset: o.token.address, extra: { name: TOKEN_NAME, version: TOKEN_VERSION } },
            maxTimeoutSeconds: o.maxTimeoutSeconds ?? 120,
          },
          description: o.description ?? 'One snapshot of the desk market',
          mimeType: 'application/json',
        },
      },
      server,
    ),
  );
  app.get(path, (_req, res) => void res.json({ market: 'TUSD-ETH', bid: '3120.5', ask: '3121.0', path }));
  return listen(app);
}
