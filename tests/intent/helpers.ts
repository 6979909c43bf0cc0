/** Shared fixtures of the intent tests (not a test file). */
import { privateKeyToAccount } from 'viem/accounts';
import type { ValidateIntentOptions } from '../../src/intent/index.js';

/** Anvil / Hardhat account #0 (public test key). */
export const ANVIL0_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const;
export const ANVIL0_ADDRESS = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
/** Anvil account #1. */
export const ANVIL1_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const;

export const anvil0 = privateKeyToAccount(ANVIL0_KEY);
export const anvil1 = privateKeyToAccount(ANVIL1_KEY);

/** 2030-01-01T00:00:00.000Z */
export const NOW = 1_893_456_000_000;
export const TTL = '2030-01-01T00:01:00.000Z'; // NOW + 60 s

export const openInput = {
  action: 'open',
  agent_id: 'agent-1',
  nonce: 1,
  ttl: TTL,
  size: 1.0,
  market: 'BTC-PERP',
  side: 'long',
  leverage: 3,
  max_slippage: 0.005,
} as const;

export const closeInput = { action: 'close', agent_id: 'agent-1', nonce: 2, ttl: TTL, size: '0.5', market: 'ETH-PERP', max_slippage: '0.01' } as const;

export const transferInput = {
  action: 'transfer',
  agent_id: 'agent-1',
  nonce: 3,
  ttl: TTL,
  size: '25',
  target_address: '0x000000000000000000000000000000000000dEaD',
} as const;

/** Options whose only registered agent is `agent-1` → Anvil #0, no nonce used. */
export function baseOptions(overrides: Partial<ValidateIntentOptions> = {}): ValidateIntentOptions {
  return {
    resolveSigner: (agentId) => (agentId === 'agent-1' ? ANVIL0_ADDRESS : null),
    isNonceUsed: () => false,
    now: NOW,
    ...overrides,
  };
}

/** Hostile values every public entry must survive (noble-style list). */
export function hostileValues(): unknown[] {
  const throwing = new Proxy(
    {},
    {
      get() {
        throw new Error('trap get');
      },
      ownKeys() {
        throw new Error('trap ownKeys');
      },
      getOwnPropertyDescriptor() {
        throw new Error('trap gOPD');
      },
      has() {
        throw new Error('trap has');
      },
      getPrototypeOf() {
        throw new Error('trap proto');
      },
    },
  );
  const getterBomb = Object.defineProperty({ ...openInput }, 'size', {
    enumerable: true,
    get() {
      throw new Error('getter');
    },
  });
  return [
    undefined,
    null,
    0,
    -0,
    NaN,
    Infinity,
    10e9999,
    1e8000000,
    '1e8000000',
    123n,
    Symbol('s'),
    () => 1,
    'x'.repeat(1_000_000),
    { length: '1e30' },
    [],
    [openInput],
    new Uint8Array(65),
    new Date(0),
    throwing,
    getterBomb,
    Object.create(null),
    JSON.parse('{"__proto__": {"polluted": true}, "action": "open"}'),
    { ...openInput, size: '1e8000000' },
    { ...openInput, size: `1${'0'.repeat(5_000_000)}` },
    { ...openInput, size: 123n },
    { ...openInput, size: { length: '1e30' } },
    { ...openInput, nonce: 'n'.repeat(129) },
    { ...openInput, ttl: '2030-01-01T00:00:00' },
    { ...openInput, signature: `0x${'ab'.repeat(65)}`, extra: 1 },
  ];
}
