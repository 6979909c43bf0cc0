/**
 * Payments benchmark (`TALLY_BENCH_ONLY=payments`): x402 payment turns ruled per second through
 * the engine with the payment referee (strict parse, offer byte-equality, EIP-712 digest and
 * recovery, policy, budget fold, store-wide nonce lookup and reservation, the append), beside
 * EIP-712 signature recovery alone (digest + recovery of the same payloads), in the same run.
 * `TALLY_BENCH_PAYMENTS` sets how many payments (default 400). Aim: ratio ≥ 0.5.
 */
import { privateKeyToAccount } from 'viem/accounts';
import { createPaymentsRuler, authorizationDigest, recoverAuthorizer, TRANSFER_WITH_AUTHORIZATION_TYPES } from '../payments/index.js';
import { canonicalJson, utf8, type CanonicalObject } from '../protocol/index.js';
import { createRefereeRuler, signMandateWithKey } from '../referee/index.js';
import { Engine } from '../session/index.js';
import { MemoryStore } from '../store/memory.js';
import type { Figure } from './core.js';

// Hardhat test accounts — public, well-known keys; never hold value.
const AGENT_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const PRINCIPAL_KEY = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6';
const ASSET = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const PAYEE = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';
const NETWORK = 'eip155:31337';
const T0 = 4_102_444_800_000; // 2100-01-01

export async function benchPayments(n = Number(process.env['TALLY_BENCH_PAYMENTS'] ?? 400)): Promise<Figure[]> {
  const agent = privateKeyToAccount(AGENT_KEY);
  const principal = privateKeyToAccount(PRINCIPAL_KEY).address;
  const accepted = { scheme: 'exact', network: NETWORK, asset: ASSET, amount: '10000', payTo: PAYEE, maxTimeoutSeconds: 120, extra: { name: 'Tally USD', version: '2' } };
  const required = { x402Version: 2, resource: { url: 'http://127.0.0.1/market-data' }, accepts: [accepted] };
  const payloads: CanonicalObject[] = [];
  for (let i = 0; i < n; i++) {
    const now = Math.floor((T0 + i * 1000) / 1000);
    const authorization = { from: agent.address, to: PAYEE as `0x${string}`, value: '10000', validAfter: String(now - 600), validBefore: String(now + 3600), nonce: `0x${(i + 1).toString(16).padStart(64, '0')}` as `0x${string}` };
    const signature = await agent.signTypedData({
      domain: { name: 'Tally USD', version: '2', chainId: 31337, verifyingContract: ASSET },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: { ...authorization, value: 10000n, validAfter: BigInt(authorization.validAfter), validBefore: BigInt(authorization.validBefore) },
    });
    payloads.push({ x402Version: 2, accepted, payload: { authorization, signature } } as CanonicalObject);
  }

  // Baseline: the digest and the recovery alone, for the same payloads (all once to warm up; then
  // timed in rounds interleaved with the turns below, so both see the same machine load).
  const recover = (from: number, to: number): void => {
    for (const p of payloads.slice(from, to)) {
      const inner = p['payload'] as { authorization: Record<string, string>; signature: string };
      const a = inner.authorization;
      const d = authorizationDigest({ name: 'Tally USD', version: '2', chainId: 31337, verifyingContract: ASSET }, { from: a['from']!, to: a['to']!, value: BigInt(a['value']!), validAfter: BigInt(a['validAfter']!), validBefore: BigInt(a['validBefore']!), nonce: a['nonce']! });
      if (recoverAuthorizer(d, inner.signature) !== agent.address.toLowerCase()) throw new Error('bench: recovery failed');
    }
  };
  recover(0, n);
  let recoverMs = 0;
  const ROUND = Math.max(1, Math.ceil(n / 8));

  const store = new MemoryStore();
  const engine = new Engine({ store, ruler: createPaymentsRuler({ store, inner: createRefereeRuler({ store }) }) });
  const spec = signMandateWithKey(
    {
      name: 'bench-payments',
      agents: { payer: agent.address },
      mandate: { version: 2, instance: 'bench/1', principal, operator: principal, executor: principal, actions: ['open'], markets: ['BTC-PERP'], caps: { size: '1', leverage: '1', slippage: '0.01' }, quota: { cap: '1' }, tx_cap: 1, starts_at: T0 - 60_000, expires_at: T0 + 2_000_000_000 },
      payments: { version: 1, assets: [{ network: NETWORK, asset: ASSET, decimals: 6, per_payment_cap: '20000', budget: String(10000 * (n + 1)) }], payees: [PAYEE] },
    },
    PRINCIPAL_KEY,
    'eip712',
  );
  const open = await engine.open(spec);
  if (!open.ok) throw new Error(open.message);
  let ms = 0;
  let admitted = 0;
  for (let i = 0; i < n; i++) {
    if (i % ROUND === 0) {
      const r0 = performance.now();
      recover(i, i + ROUND);
      recoverMs += performance.now() - r0;
    }
    const ord = i - 1;
    const f = await engine.frame({ sessionId: open.sessionId, ordinal: ord, time: T0 + i * 1000, data: { x402: { offers: [{ id: 'o', required }] } } });
    if (!f.ok) throw new Error(f.message);
    const bytes = utf8(canonicalJson({ x402: { agent_id: 'payer', offer: 'o', payload: payloads[i]! } }));
    const t0 = performance.now();
    const t = await engine.turn({ sessionId: open.sessionId, ordinal: ord, parentHash: f.entryHash, frameRoot: f.frameRoot, body: { kind: 'authored', bytes } });
    ms += performance.now() - t0;
    if (!t.ok) throw new Error(t.message);
    if ((t.ruling as { x402?: { payment?: { admitted?: boolean } } } | undefined)?.x402?.payment?.admitted === true) admitted++;
  }
  if (admitted !== n) throw new Error(`bench: ${admitted} of ${n} payments admitted`);
  const ruled = Math.round((n / ms) * 1000);
  const recovered = Math.round((n / recoverMs) * 1000);
  return [{ name: 'x402 payment turns ruled (engine + payment referee)', perSecond: ruled, baselineName: 'EIP-712 digest + recovery alone', baselinePerSecond: recovered, ratio: ruled / recovered, note: `${n} payments, each admitted` }];
}
