/** The pin fields of the page's form (as `tally verify --root --session --size`), read and refused in words, and the engine key it was given. */
import { isDigestHex, type ChainPin } from '../../protocol/index.js';
import { byId } from './dom.js';

/** The values pinned by hand (as `tally verify --root --session --size`), or what is wrong with them. */
export function pinFromForm(): ChainPin | undefined | string {
  const root = byId<HTMLInputElement>('pin-root').value.trim();
  const session = byId<HTMLInputElement>('pin-session').value.trim();
  const size = byId<HTMLInputElement>('pin-size').value.trim();
  const pin: { receiptRoot?: string; sessionId?: string; size?: number } = {};
  if (root !== '') {
    if (!isDigestHex(root)) return `the pinned receipt root must be 64 lowercase hex characters (as tally verify --root): you typed ${describe(root)}`;
    pin.receiptRoot = root;
  }
  if (session !== '') {
    if (!isDigestHex(session)) return `the pinned session id must be 64 lowercase hex characters (as tally verify --session): you typed ${describe(session)}`;
    pin.sessionId = session;
  }
  if (size !== '') {
    if (!/^[1-9][0-9]{0,15}$/.test(size)) return `the pinned size must be a positive integer in decimal, no sign or leading zero: you typed ${JSON.stringify(size.slice(0, 40))}`;
    pin.size = Number(size);
  }
  return Object.keys(pin).length === 0 ? undefined : pin;
}

/** What is wrong with a typed hex value, in words (refused, never repaired). */
export function describe(v: string): string {
  const n = [...v].length;
  const what = /[A-F]/.test(v) && /^[0-9a-fA-F]*$/.test(v) ? 'uppercase hex' : /^[0-9a-f]*$/.test(v) ? 'hex' : 'characters that are not hex';
  return `${n} character${n === 1 ? '' : 's'} of ${what}${n === 64 ? '' : `, not 64`}`;
}

/** The engine key the grader supplied (key file, else key text), if any. */
export async function suppliedKey(): Promise<string | undefined> {
  const k = byId<HTMLInputElement>('in-key').files?.[0];
  const keyText = byId<HTMLInputElement>('in-key-text').value.trim();
  return k ? await k.text() : keyText !== '' ? keyText : undefined;
}
