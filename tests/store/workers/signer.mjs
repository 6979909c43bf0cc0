// One signer process of the cross-process signing-log race. Opens the shared
// store, builds history `h` (A, or B which agrees with A on the first `fork`
// leaves), waits for "go" on stdin, then records checkpoints of its history
// at the given sizes through SigningLog, as fast as it can. Prints one JSON
// line per answer, then "done".
import { createInterface } from 'node:readline';
import { sha256 } from '../../../dist/codec/index.js';
import { PackedMerkleTree, SigningLog, receiptHasher } from '../../../dist/receipt/index.js';
import { openStore } from '../../../dist/store/index.js';

const cfg = JSON.parse(process.argv[2]);
const enc = new TextEncoder();
const tree = new PackedMerkleTree(receiptHasher);
for (let i = 0; i < cfg.n; i++) tree.append(sha256(enc.encode(i < cfg.fork || cfg.h === 'A' ? `A ${i}` : `B ${i}`)));
const store = await openStore(cfg.location);
const log = new SigningLog(store);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
out({ ready: true });
const rl = createInterface({ input: process.stdin });
await new Promise((resolve) => rl.once('line', resolve));
for (const size of cfg.sizes) {
  const r = await log.record({ origin: cfg.origin, size, root: tree.root(size) }, tree);
  out({ size, ok: r.ok, duplicate: r.ok ? r.duplicate : undefined, code: r.ok ? undefined : r.code });
}
await store.close();
out({ done: true });
rl.close();
