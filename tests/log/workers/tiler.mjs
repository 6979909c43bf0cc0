// One engine process of the stored-tiles process test (built code, dist/):
// opens the shared store, waits for "go" on stdin, starts an engine log on
// it (writing the tiles no process has written yet, racing the others) and
// signs a checkpoint. Prints {size, root, note}, then {done: true}.
import { createInterface } from 'node:readline';
import { EngineLog } from '../../../dist/log/index.js';
import { parsePrivateKey } from '../../../dist/receipt/index.js';
import { openStore } from '../../../dist/store/index.js';

const cfg = JSON.parse(process.argv[2]);
const store = await openStore(cfg.location);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
out({ ready: true });
await new Promise((r) => createInterface({ input: process.stdin }).once('line', r));
const log = new EngineLog({ store, key: parsePrivateKey(cfg.key), minIntervalMs: 0 });
const cp = await log.checkpoint();
out({ size: cp.size, root: cp.root, note: cp.signedCheckpoint });
await store.close();
out({ done: true });
