/**
 * An independent, deliberately naive verifier written from docs/PROTOCOL.md
 * alone: node:crypto for SHA-256, its own canonical-JSON encoder, a recursive
 * RFC 6962 tree hash. It shares no code with src/. If it and the engine ever
 * disagree, one of them (or the document) is wrong.
 */
import { createHash } from 'node:crypto';

const sha = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const tagged = (tag: string, data: Buffer) => sha(Buffer.from(tag, 'utf8'), Buffer.from([0]), data);

function enc(v: unknown): string {
  if (v === null) throw new Error('null is not allowed');
  if (typeof v === 'string') {
    let s = '"';
    for (const ch of v) {
      const c = ch.codePointAt(0)!;
      if (ch === '"') s += '\\"';
      else if (ch === '\\') s += '\\\\';
      else if (c === 8) s += '\\b';
      else if (c === 9) s += '\\t';
      else if (c === 10) s += '\\n';
      else if (c === 12) s += '\\f';
      else if (c === 13) s += '\\r';
      else if (c < 32) s += '\\u00' + (c < 16 ? '0' : '') + c.toString(16);
      else if (c >= 0xd800 && c <= 0xdfff) throw new Error('lone surrogate');
      else s += ch;
    }
    return s + '"';
  }
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new Error('only safe integers');
    return String(v === 0 ? 0 : v);
  }
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(enc).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((k) => `${enc(k)}:${enc(o[k])}`).join(',')}}`;
}

function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

export interface NaiveResult {
  ok: boolean;
  error?: string;
  at?: number;
  sessionId?: string;
  entryHashes?: string[];
  receiptRoot?: string;
}

/** Verifies bundle bytes; returns the session id, entry hashes and receipt root. */
export function naiveVerify(bundle: Buffer): NaiveResult {
  try {
    return verify(bundle);
  } catch (err) {
    return { ok: false, error: String(err) };
  }
}

function verify(bundle: Buffer): NaiveResult {
  const text = bundle.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bundle)) return { ok: false, error: 'not utf-8', at: 0 };
  if (!text.endsWith('\n')) return { ok: false, error: 'no final newline', at: 0 };
  const lines = text.slice(0, -1).split('\n');
  const leaves: Buffer[] = [];
  const hashes: string[] = [];
  let sid = '';
  let prev = '';
  let next = -1;
  let frame: { ordinal: number; root: string; time: number } | undefined;
  let lastTime = -1;
  for (let i = 0; i < lines.length; i++) {
    const fail = (error: string): NaiveResult => ({ ok: false, error, at: i });
    const line = lines[i]!;
    let e: Record<string, unknown>;
    try {
      e = JSON.parse(line) as Record<string, unknown>;
      if (enc(e) !== line) return fail('not canonical');
    } catch (err) {
      return fail(String(err));
    }
    const leaf = sha(Buffer.from([0]), Buffer.from(line, 'utf8'));
    const h = leaf.toString('hex');
    if (i === 0) {
      if (e['kind'] !== 'genesis' || e['protocol'] !== 'tally/1') return fail('first entry is not a tally/1 genesis');
      sid = h;
    } else {
      if (e['session'] !== sid) return fail('wrong session');
      if (e['parent'] !== prev) return fail('broken link');
      if (e['kind'] === 'frame') {
        if (frame) return fail('frame while a frame is unanswered');
        if (e['ordinal'] !== next) return fail('ordinal');
        if ((e['time'] as number) < lastTime) return fail('time went back');
        const content: Record<string, unknown> = { ordinal: e['ordinal'], time: e['time'] };
        if ('data' in e) content['data'] = e['data'];
        const root = tagged('tally/v1/frame-root', Buffer.from(enc(content), 'utf8')).toString('hex');
        if (root !== e['frameRoot']) return fail('frame root');
        frame = { ordinal: e['ordinal'] as number, root, time: e['time'] as number };
        lastTime = frame.time;
      } else if (e['kind'] === 'turn') {
        if (!frame || e['ordinal'] !== frame.ordinal || e['frameRoot'] !== frame.root) return fail('turn does not answer the frame');
        const body = e['body'] as Record<string, unknown>;
        if (body['kind'] === 'authored') {
          const bytes = Buffer.from(body['bytes'] as string, 'base64');
          if (bytes.toString('base64') !== body['bytes']) return fail('base64');
          if (tagged('tally/v1/authored', bytes).toString('hex') !== body['hash']) return fail('authored hash');
        } else if (body['kind'] !== 'stand-down' || !['provider', 'timeout', 'malformed'].includes(body['failureClass'] as string)) {
          return fail('body');
        }
        next = frame.ordinal + 1;
        frame = undefined;
      } else if (e['kind'] === 'finalize') {
        if (i !== lines.length - 1) return fail('entries after the seal');
        if (frame) return fail('seal with an unanswered frame');
        if (e['size'] !== i) return fail('seal size');
        if (mth(leaves).toString('hex') !== e['root']) return fail('seal root');
      } else return fail('kind');
    }
    leaves.push(leaf);
    hashes.push(h);
    prev = h;
  }
  const last = JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>;
  if (last['kind'] !== 'finalize') return { ok: false, error: 'not sealed', at: lines.length - 1 };
  return { ok: true, sessionId: sid, entryHashes: hashes, receiptRoot: mth(leaves).toString('hex') };
}
