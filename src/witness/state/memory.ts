import { sameRoot, type WitnessHead, type WitnessRecord, type WitnessStore } from './types.js';

/**
 * Witness state in memory, for tests and in-process set-ups (nothing survives
 * the process). `compareAndSwap` compares and writes with no `await` in
 * between, so it is atomic within the process.
 */
export class MemoryWitnessStore implements WitnessStore {
  readonly name = 'memory';
  private readonly records = new Map<string, WitnessRecord>();
  private readonly keys: string[] = [];

  async latest(origin: string): Promise<WitnessRecord | undefined> {
    return this.records.get(origin);
  }

  async compareAndSwap(origin: string, expected: WitnessHead | undefined, next: WitnessRecord): Promise<boolean> {
    const cur = this.records.get(origin);
    if (expected === undefined ? cur !== undefined : cur === undefined || cur.size !== expected.size || !sameRoot(cur.root, expected.root)) return false;
    this.records.set(origin, { ...next, root: next.root.slice() });
    return true;
  }

  async logKeys(): Promise<string[]> {
    return [...this.keys];
  }

  async addLogKey(vkey: string): Promise<void> {
    if (!this.keys.includes(vkey)) this.keys.push(vkey);
  }

  async close(): Promise<void> {}
}
