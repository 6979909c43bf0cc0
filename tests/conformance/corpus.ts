/**
 * The conformance corpus docs/vectors/ (PROTOCOL.md §14) as typed values: the
 * loader every runner shares, and the bytes of a bundle case.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the committed corpus lives. */
export const VECTORS = join(import.meta.dirname, '../../docs/vectors');

/** One piece of a bundle: hex bytes, or the UTF-8 of `repeat` written `times` times. */
export type Part = { readonly hex: string } | { readonly repeat: string; readonly times: number };

/** Verification options a case asks for (PROTOCOL.md §5.6 and the pin). */
export interface CaseOptions {
  readonly requireSealed?: boolean;
  readonly pin?: { readonly sessionId?: string; readonly size?: number; readonly receiptRoot?: string };
}

/** What a verifier must answer for a bundle. */
export type Expected =
  | { readonly ok: true; readonly sessionId: string; readonly size: number; readonly receiptRoot: string; readonly sealed: boolean }
  | { readonly ok: false; readonly index: number; readonly code: string };

/** One bundle vector. */
export interface BundleCase {
  readonly name: string;
  readonly parts: readonly Part[];
  readonly options?: CaseOptions;
  readonly expect: Expected;
}

/** Reads one corpus file. */
export function loadVectors<T>(file: string): T {
  return JSON.parse(readFileSync(join(VECTORS, file), 'utf8')) as T;
}

/** The bundle cases. */
export const bundleCases = (): readonly BundleCase[] => loadVectors<{ cases: BundleCase[] }>('bundles.json').cases;

/** The bytes of a bundle case: its parts concatenated. */
export function bundleBytes(c: BundleCase): Uint8Array {
  return Buffer.concat(c.parts.map((p) => ('hex' in p ? Buffer.from(p.hex, 'hex') : Buffer.from(p.repeat.repeat(p.times), 'utf8'))));
}
