/**
 * Newline-delimited JSON-RPC over a byte stream, bounded: the one line reader
 * both sides of the gateway use (the agent's stdin, the upstream child's
 * stdout). Each line is read by Tally's strict parser; a line longer than
 * `maxLine` is never buffered whole — its bytes are counted and dropped until
 * its newline, then reported once as oversize.
 */
import { parseStrictJson } from '../protocol/index.js';

/** What a line reader reports. */
export interface LineSink {
  /** A strict-JSON line (any value; the caller checks the JSON-RPC shape). */
  value(value: unknown, bytes: number): void;
  /** A line that is not strict JSON (`snippet`: its first bytes, as text). */
  malformed(code: string, snippet: string, bytes: number): void;
  /** A line longer than the bound (dropped). */
  oversize(bytes: number): void;
}

/** Splits chunks into lines and hands each to a {@link LineSink}. */
export class LineReader {
  private parts: Buffer[] = [];
  private held = 0;
  /** Bytes of the current line when it is being dropped (over the bound). */
  private dropping: number | undefined;

  constructor(
    private readonly sink: LineSink,
    private readonly maxLine: number,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, start)) {
      this.take(chunk.subarray(start, i));
      this.end();
      start = i + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
  }

  private take(part: Buffer): void {
    if (this.dropping !== undefined) {
      this.dropping += part.length;
      return;
    }
    if (this.held + part.length > this.maxLine) {
      this.dropping = this.held + part.length;
      this.parts = [];
      this.held = 0;
      return;
    }
    if (part.length > 0) {
      this.parts.push(Buffer.from(part));
      this.held += part.length;
    }
  }

  private end(): void {
    if (this.dropping !== undefined) {
      const n = this.dropping;
      this.dropping = undefined;
      this.sink.oversize(n);
      return;
    }
    let line = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    this.parts = [];
    this.held = 0;
    if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, -1);
    if (line.length === 0) return;
    const r = parseStrictJson(line);
    if (r.ok) this.sink.value(r.value, line.length);
    else this.sink.malformed(r.code, line.subarray(0, 200).toString('utf8'), line.length);
  }
}
