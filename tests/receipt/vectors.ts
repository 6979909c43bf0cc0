/** Loads the committed vectors of tests/receipt/vectors (see the README there for sources and licences). */
import { readFileSync } from 'node:fs';

function load<T>(file: string): T {
  return JSON.parse(readFileSync(new URL(`./vectors/${file}`, import.meta.url), 'utf8')) as T;
}

export interface GoNoteVectors {
  peter: { name: string; keyIdHex: string; privateKey: string; verifierKey: string };
  enoch: { name: string; keyIdHex: string; verifierKey: string };
  text: string;
  peterSig: string;
  enochSig: string;
  signedByPeter: string;
  badVerifierKeys: { wrongLengthAdjustedKeyId: string; unknownAlgorithmAdjustedKeyId: string };
}

export interface GoTreeVectors {
  verifierKey: string;
  signedTree: string;
  origin: string;
  size: number;
  rootBase64: string;
}

export interface C2spVectors {
  signedNote: { note: string; text: string; signerName: string };
  checkpoint: { note: string; origin: string; size: number; rootBase64: string };
  tlogProof: { text: string; index: number; proofLength: number };
}

export interface Rfc8032Vectors {
  vectors: { seed: string; publicKey: string; message: string; signature: string }[];
}

export const goNote = load<GoNoteVectors>('go-sumdb-note.json');
export const goTree = load<GoTreeVectors>('go-sumdb-tree.json');
export const c2sp = load<C2spVectors>('c2sp-examples.json');
export const rfc8032 = load<Rfc8032Vectors>('rfc8032-ed25519.json');

/** UTF-8 bytes of `s`. */
export function utf8(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

/** Go's `s[:i] + ins + s[i:]` with i a BYTE offset into the UTF-8 of s. */
export function insertAtByte(s: string, i: number, ins: string): Uint8Array {
  const b = Buffer.from(s, 'utf8');
  return new Uint8Array(Buffer.concat([b.subarray(0, i), Buffer.from(ins, 'utf8'), b.subarray(i)]));
}
