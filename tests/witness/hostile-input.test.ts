/**
 * Hostile input to the witness layer's public parsers: verifier keys,
 * cosignature lines, add-checkpoint bodies and policy files. Every hostile
 * value is refused with a typed result (or, for a non-string where the type
 * says string, a `TallyError`) — never a crash with a non-Tally error, and
 * never accepted.
 */
import { describe, expect, it } from 'vitest';
import { TallyError } from '../../src/protocol/index.js';
import { createNotary, generateEngineKey } from '../../src/receipt/index.js';
import {
  addSignatureLines,
  cosignerKeyFrom,
  createWitness,
  MemoryWitnessStore,
  parseCosignerVerifierKey,
  parseWitnessPolicy,
  splitSignatureLines,
  verifyCosignatures,
} from '../../src/witness/index.js';
import { runDay } from '../helpers/day.js';

const engineKey = generateEngineKey('tally.example/desk');
const w1 = cosignerKeyFrom(generateEngineKey('w1.example'));
const goodHex = Buffer.from(w1.verifierKey.split('+').slice(2).join('+'), 'base64').subarray(1).toString('hex');

/** Values no parser may accept, whatever it parses. */
const NON_STRINGS: unknown[] = [undefined, null, 0, -1, Number.NaN, 1n, true, {}, [], ['x'], () => 'x', Symbol('s'), new Uint8Array(4), { toString: () => { throw new Error('boom'); } }];
const STRINGS: string[] = [
  '',
  '\n',
  '\r\n',
  '\0',
  ' ',
  '+',
  '++',
  '+++',
  'a'.repeat(1 << 16),
  '\u2014 \n',
  '\uFEFFw1.example',
  '\uD800',
  'w1.example+zzzzzzzz+AAAA',
  'w1.example+00000000+!!!!',
  `${w1.verifierKey} `,
  ` ${w1.verifierKey}`,
  `${w1.verifierKey}\n`,
  w1.verifierKey.replace(/.$/, '='),
  w1.verifierKey.slice(0, -4),
  `${w1.verifierKey}AAAA`,
  w1.verifierKey.replace('+', '\u2014'),
  engineKey.verifierKey, // an Ed25519 note key (type 0x01), not a cosigner key
  '__proto__',
  'constructor+00000000+BA==',
];

/** Runs `f` on `v`: it must return a value `accept` refuses or throw a TallyError. */
function mustRefuse(f: (v: never) => unknown, v: unknown, refused: (r: unknown) => boolean): void {
  let out: unknown;
  try {
    out = f(v as never);
  } catch (e) {
    expect(e, `threw a non-Tally error for ${describe_(v)}: ${String(e)}`).toBeInstanceOf(TallyError);
    return;
  }
  expect(refused(out), `accepted ${describe_(v)}`).toBe(true);
}
function describe_(v: unknown): string {
  try {
    return typeof v === 'string' ? JSON.stringify(v.slice(0, 60)) : typeof v === 'symbol' || typeof v === 'function' ? typeof v : String(v as string).slice(0, 60);
  } catch {
    return typeof v;
  }
}

const notOk = (r: unknown): boolean => typeof r === 'object' && r !== null && (r as { ok?: unknown }).ok === false && typeof (r as { code?: unknown }).code === 'string';

describe('hostile witness input', () => {
  it('parseCosignerVerifierKey refuses every hostile vkey with a typed result', () => {
    for (const v of STRINGS) expect(parseCosignerVerifierKey(v), describe_(v)).toMatchObject({ ok: false, code: expect.any(String) });
    for (const v of NON_STRINGS) mustRefuse(parseCosignerVerifierKey, v, notOk);
    expect(parseCosignerVerifierKey(w1.verifierKey).ok).toBe(true); // the control
  });

  it('parseWitnessPolicy refuses every hostile policy file with a typed result', () => {
    const good = `witness w1.example ${goodHex}\nquorum w1.example\n`;
    const hostile = [
      ...STRINGS.filter((s) => s.trim() !== ''),
      `witness w1.example ${goodHex}\n`, // no quorum line
      `witness w1.example ${goodHex}\nquorum w2.example\n`, // unknown name
      `witness w1.example ${goodHex.slice(2)}\nquorum w1.example\n`, // short key
      `witness w1.example ${goodHex.replace(/[a-f]/, 'A')}\nquorum w1.example\n`, // hex in one case only
      `witness w1.example ${goodHex}\nwitness w1.example ${goodHex}\nquorum w1.example\n`, // duplicate name
      `witness w1.example ${goodHex}\ngroup g 2 w1.example\nquorum g\n`, // threshold above members
      `witness w1.example ${goodHex}\ngroup g 0 w1.example\nquorum g\n`,
      `witness w1.example ${goodHex}\ngroup g -1 w1.example\nquorum g\n`,
      `witness w1.example ${goodHex}\ngroup g 1 g\nquorum g\n`, // self-reference
      `witness w1.example ${goodHex}\nquorum w1.example\nquorum w1.example\n`,
      `witness w1.example ${goodHex} ftp://x\nquorum w1.example\n`,
      `witness w1.example ${goodHex}\nquorum w1.example\nbogus line\n`,
      `witness w1.example ${goodHex}\0\nquorum w1.example\n`,
      `witness __proto__ ${goodHex}\nquorum __proto__x\n`,
      good.repeat(2),
    ];
    for (const t of hostile) {
      expect(parseWitnessPolicy(t), describe_(t)).toMatchObject({ ok: false, code: expect.any(String) });
    }
    for (const v of NON_STRINGS) mustRefuse(parseWitnessPolicy, v, notOk);
    // The Sigsum format splits lines on whitespace and allows comments: these are one policy, not hostile.
    for (const same of [good.replace(/\n/g, '\r\n'), good.replace(/ /g, '\t'), `# c\n  ${good}`]) expect(parseWitnessPolicy(same).ok).toBe(true);
    expect(parseWitnessPolicy(good).ok).toBe(true); // the control
  });

  it('cosignature lines: hostile lines are never verified cosignatures, and splitting never throws a non-Tally error', async () => {
    const { engine, sid } = await runDay({ finalize: false });
    const cp = await createNotary({ key: engineKey }).issueCheckpoint(engine, sid, 2);
    if (!cp.ok) throw new Error(cp.message);
    const [real] = splitSignatureLines(addSignatureLines(cp.signedCheckpoint, []).split('\n\n').slice(1).join('\n\n')) ?? [];
    expect(real).toBeDefined();
    const sig = Buffer.from(real!.split(' ').pop()!, 'base64');
    const as = (name: string, blob: Buffer | string) => `\u2014 ${name} ${typeof blob === 'string' ? blob : blob.toString('base64')}`;
    const kid = Buffer.from(w1.verifierKey.split('+')[1]!, 'hex');
    const hostileLines = [
      ...STRINGS.map((s) => `\u2014 w1.example ${s}`),
      as('w1.example', Buffer.concat([kid, Buffer.alloc(8), sig])), // a right key ID, time 0, the log's signature
      as('w1.example', Buffer.concat([kid, Buffer.alloc(8, 0xff), Buffer.alloc(64)])), // time beyond 2^63
      as('w1.example', Buffer.concat([kid, Buffer.alloc(8)])), // no signature
      as('w1.example', Buffer.concat([kid, Buffer.alloc(8), Buffer.alloc(65)])), // one byte too many
      as('w1.example', Buffer.concat([kid, Buffer.alloc(8), Buffer.alloc(64)]).toString('base64').replace(/=*$/, '')),
      as('w1.example', Buffer.concat([kid, Buffer.alloc(8), Buffer.alloc(64)]).toString('base64url')),
      `\u2014  w1.example ${Buffer.concat([kid, Buffer.alloc(72)]).toString('base64')}`,
      `- w1.example ${Buffer.concat([kid, Buffer.alloc(72)]).toString('base64')}`,
    ];
    for (const line of hostileLines) {
      mustRefuse(splitSignatureLines as (v: never) => unknown, `${line}\n`, (r) => r === undefined || Array.isArray(r));
      let note: string;
      try {
        note = addSignatureLines(cp.signedCheckpoint, [line]);
      } catch (e) {
        expect(e, describe_(line)).toBeInstanceOf(TallyError);
        continue;
      }
      const v = verifyCosignatures(note, [engineKey.verifierKey], [w1.verifier]);
      expect(v.ok && v.cosignatures.length, describe_(line)).not.toBeGreaterThan(0);
    }
    for (const v of NON_STRINGS) {
      mustRefuse(splitSignatureLines as (v: never) => unknown, v, (r) => r === undefined);
      mustRefuse((x: never) => verifyCosignatures(x, [engineKey.verifierKey], [w1.verifier]), v, notOk);
    }
  });

  it('addCheckpoint answers every hostile body with a typed C2SP status, never a throw, and cosigns nothing', async () => {
    const store = new MemoryWitnessStore();
    const w = createWitness({ key: w1, store });
    await w.trustLogKey(engineKey.verifierKey);
    const { engine, sid } = await runDay({ finalize: false });
    const cp = await createNotary({ key: engineKey }).issueCheckpoint(engine, sid, 2);
    if (!cp.ok) throw new Error(cp.message);
    const c = cp.signedCheckpoint;
    const bodies = [
      ...STRINGS,
      `old 0\n\n${c}`.replace('old 0', 'old -1'),
      `old 00\n\n${c}`,
      `old +0\n\n${c}`,
      `old 0x0\n\n${c}`,
      `old 1e3\n\n${c}`,
      `old 9007199254740993\n\n${c}`,
      `old 3\n\n${c}`, // old > new
      `old 0\n${c}`, // no blank line
      `old 0\r\n\r\n${c}`,
      `old 0\n\n${c.replace('\n\n', '\n')}`,
      `old 0\n\n${c.replace(/\n$/, '')}`,
      `old 0\n\n${c}extra`,
      `old 0\n${'AAAA\n'.repeat(64)}\n${c}`, // 64 proof lines
      `old 1\n!!!!\n\n${c}`,
      `old 1\n${Buffer.alloc(31).toString('base64')}\n\n${c}`,
      `old 0\n\n${c.replace(sid, sid.toUpperCase())}`,
      `old 0\n\n${c.replace(/\n2\n/, '\n02\n')}`,
      `old 0\n\n${c.replace(/\n2\n/, '\n3\n')}`, // signature no longer verifies
      `old 0\n\n${c.replace(/\n2\n/, '\n0\n')}`,
      `old 0\n\n${c.replace(/\u2014 [^\n]*\n$/, '')}`, // unsigned
      `old 0\n\n${c.replace('tally.example/desk', 'other.example/desk')}`, // unknown origin
      `old 0\n\n\uFEFF${c}`,
    ];
    for (const b of bodies) {
      const r = await w.addCheckpoint(b);
      expect(r, describe_(b)).toMatchObject({ ok: false, code: expect.any(String), status: expect.any(Number) });
      if (!r.ok) expect([400, 403, 404, 409, 422], describe_(b)).toContain(r.status);
    }
    for (const v of NON_STRINGS) {
      let r: unknown;
      try {
        r = await w.addCheckpoint(v as never);
      } catch (e) {
        expect(e, describe_(v)).toBeInstanceOf(TallyError);
        continue;
      }
      expect(notOk(r), describe_(v)).toBe(true);
    }
    expect(await store.latest(cp.origin)).toBeUndefined();
    expect(await w.addCheckpoint(`old 0\n\n${c}`)).toMatchObject({ ok: true, status: 200 }); // the control
  });
});
