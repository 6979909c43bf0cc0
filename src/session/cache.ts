/** The engine's cache of session states. */
import type { SessionState } from './state.js';

/** A least-recently-used map of session states (Map keeps insertion order; a hit re-inserts). */
export class SessionCache {
  private readonly map = new Map<string, SessionState>();
  constructor(private readonly max: number) {}

  get(id: string): SessionState | undefined {
    const st = this.map.get(id);
    if (st !== undefined) {
      this.map.delete(id);
      this.map.set(id, st);
    }
    return st;
  }

  set(id: string, st: SessionState): void {
    this.map.delete(id);
    this.map.set(id, st);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }

  delete(id: string): void {
    this.map.delete(id);
  }

  clear(): void {
    this.map.clear();
  }

  get size(): number {
    return this.map.size;
  }
}
