/**
 * The demo's engine log: after the day is sealed, the log of every session
 * the demo store holds (docs/PROTOCOL.md §15) is exported as C2SP
 * tlog-tiles under `<out>/log/`, and the day's seal leaf is proved in the
 * log's checkpoint as a C2SP tlog-proof (`<out>/log-proof.tlog-proof`, the
 * leaf's bytes in its `extra` line), checked offline with the log's key
 * (`<out>/log.vkey`) — the whole chain of trust from one command.
 */
import { createPrivateKey } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { EngineLog } from '../log/engine-log.js';
import { exportTiles } from '../log/tiles.js';
import { findCheckpointLeaf, logBinding, verifyLogBinding } from '../log/binding.js';
import { engineKeyFromPrivateKey, type EngineKey } from '../receipt/keys/engineKey.js';
import { hasEngineLog, type TranscriptStore } from '../store/index.js';
import { DEMO_ENGINE_NAME } from './keys.js';

/** RFC 8032 §7.1 TEST 2 secret key (a public test vector, not the engine key's TEST 1). */
const RFC8032_TEST2_SEED = '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb';
const PKCS8_ED25519_PREFIX = '302e020100300506032b657004220420';

/** The demo engine log's key, named as its origin `demo.tally.invalid/log` (public: anyone can sign under it). */
export function demoLogKey(): EngineKey {
  const der = Buffer.from(PKCS8_ED25519_PREFIX + RFC8032_TEST2_SEED, 'hex');
  return engineKeyFromPrivateKey(`${DEMO_ENGINE_NAME}/log`, createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
}

/** What the demo's log step wrote and found. */
export interface DemoLogResult {
  readonly ok: boolean;
  readonly detail: string;
  /** The seal leaf's position in the log (-1 when not found). */
  readonly index: number;
}

/** Exports the log's tiles to `files.dir`, writes the seal leaf's tlog-proof and the log key, and checks the proof. */
export async function demoEngineLog(
  store: TranscriptStore,
  seal: { readonly origin: string; readonly size: number; readonly root: string },
  files: { readonly dir: string; readonly proof: string; readonly verifierKey: string },
): Promise<DemoLogResult> {
  if (!hasEngineLog(store)) return { ok: false, detail: `the store ${store.name} keeps no engine log`, index: -1 };
  const key = demoLogKey();
  const log = new EngineLog({ store, key });
  const { checkpoint } = await exportTiles(log, files.dir);
  await writeFile(files.verifierKey, key.verifierKey + '\n');
  const index = await findCheckpointLeaf(log, seal, checkpoint.size);
  if (index < 0) return { ok: false, detail: `the log of ${checkpoint.size} leaves has no seal leaf for ${seal.origin}`, index };
  const text = await logBinding(log, seal, checkpoint);
  await writeFile(files.proof, text);
  const v = verifyLogBinding(text, { logVerifiers: [key.verifierKey], checkpoint: seal, seal: true });
  return v.ok
    ? { ok: true, detail: `the seal is leaf ${index} of the engine log's ${checkpoint.size}, signed by ${key.name}`, index }
    : { ok: false, detail: `${v.code}: ${v.message}`, index };
}
