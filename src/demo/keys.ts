/**
 * The demo's keys. They are PUBLIC, well-known test keys and must never hold
 * value or sign anything real:
 * - the agents sign with Anvil/Hardhat dev accounts #0 and #1 (registered in
 *   the spec), the intruder with account #2 (not registered); the mandate's
 *   principal, operator and executor are accounts #3–#5, its panel of judges
 *   accounts #6, #7 and #10 (of the same test mnemonic), the treasury is #8's
 *   address;
 * - the engine signs its receipts with the RFC 8032 §7.1 TEST 1 Ed25519 key,
 *   so the demo's signed receipt is the same on every machine.
 */
import { createPrivateKey } from 'node:crypto';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { engineKeyFromPrivateKey, type EngineKey } from '../receipt/keys/index.js';

/** A demo signer: agent id, private key and address. */
export interface DemoAgent {
  readonly id: string;
  readonly key: `0x${string}`;
  readonly account: PrivateKeyAccount;
  /** The market this agent trades. */
  readonly market: string;
}

/** Anvil account #0: registered as `alpha`, trades BTC-PERP. */
export const ANVIL_KEY_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const;
/** Anvil account #1: registered as `beta`, trades ETH-PERP. */
export const ANVIL_KEY_1 = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const;
/** Anvil account #2: NOT registered; the intruder's key. */
export const ANVIL_KEY_2 = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a' as const;

/** The two registered demo agents. */
export const DEMO_AGENTS: readonly DemoAgent[] = Object.freeze([
  Object.freeze({ id: 'alpha', key: ANVIL_KEY_0, account: privateKeyToAccount(ANVIL_KEY_0), market: 'BTC-PERP' }),
  Object.freeze({ id: 'beta', key: ANVIL_KEY_1, account: privateKeyToAccount(ANVIL_KEY_1), market: 'ETH-PERP' }),
]);

/** The unregistered intruder (signs as `mallory`, or impersonates a registered agent). */
export const INTRUDER: DemoAgent = Object.freeze({ id: 'mallory', key: ANVIL_KEY_2, account: privateKeyToAccount(ANVIL_KEY_2), market: 'BTC-PERP' });

/** Anvil account #3: the mandate's principal (owns the money; may release tickets). */
export const ANVIL_KEY_3 = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6' as const;
/** Anvil account #4: the mandate's operator (runs the desk; releases unfilled orders). */
export const ANVIL_KEY_4 = '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a' as const;
/** Anvil account #5: the mandate's executor (reports fills as ticket redemptions). */
export const ANVIL_KEY_5 = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba' as const;
/** Anvil account #6: the panel's rule judge. */
export const ANVIL_KEY_6 = '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e' as const;
/** Anvil account #7: the panel's sceptical judge. */
export const ANVIL_KEY_7 = '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356' as const;
/** Hardhat account #10 (the test mnemonic's eleventh key): the panel's cautious judge. */
export const HARDHAT_KEY_10 = '0xf214f2b2cd398c806f84e317254e0f0b801d0643303237d97a22a48e01628897' as const;

/** The referee's parties: who signs what. */
export const DEMO_PARTIES = Object.freeze({
  principal: privateKeyToAccount(ANVIL_KEY_3),
  operator: privateKeyToAccount(ANVIL_KEY_4),
  executor: privateKeyToAccount(ANVIL_KEY_5),
  /** The rule judge (the first of the panel). */
  judge: privateKeyToAccount(ANVIL_KEY_6),
});

/** Where profits are transferred (the only target the mandate allows): Anvil account #8's address. */
export const TREASURY_ADDRESS = '0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f';
/** A transfer target the mandate does not allow: Anvil account #9's address. */
export const OUTSIDER_ADDRESS = '0xa0ee7a142d267c1f36714e4a8f75612f20a79720';

/** Note key name of the demo engine. */
export const DEMO_ENGINE_NAME = 'demo.tally.invalid';

/** RFC 8032 §7.1 TEST 1 secret key (public test vector). */
const RFC8032_TEST1_SEED = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const PKCS8_ED25519_PREFIX = '302e020100300506032b657004220420';

/**
 * The demo engine's Ed25519 receipt key (a public test vector: anyone can
 * forge receipts under it, which is the point of a demo key).
 *
 * @example
 * demoEngineKey().verifierKey; // 'demo.tally.invalid+…'
 */
export function demoEngineKey(): EngineKey {
  const der = Buffer.from(PKCS8_ED25519_PREFIX + RFC8032_TEST1_SEED, 'hex');
  return engineKeyFromPrivateKey(DEMO_ENGINE_NAME, createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
}
