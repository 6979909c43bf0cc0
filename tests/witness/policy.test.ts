/** Witness policies: the Sigsum policy format as Tally reads it, quorum rules, and what a grader refuses. */
import { describe, expect, it } from 'vitest';
import { generateEngineKey } from '../../src/receipt/index.js';
import { addSignatureLines, checkWitnessPolicy, cosignatureLine, cosignerKeyFrom, parseWitnessPolicy, quorumPolicy } from '../../src/witness/index.js';
import { testLog } from './helpers.js';

const ws = ['w1.example', 'w2.example', 'w3.example'].map((n) => cosignerKeyFrom(generateEngineKey(n)));
const hex = (k: { publicKey: Uint8Array }) => Buffer.from(k.publicKey).toString('hex');
const log = testLog();
log.append(5);
const text = log.checkpoint().slice(0, log.checkpoint().indexOf('\n\n') + 1);
const cosigned = (...idx: number[]) => addSignatureLines(log.checkpoint(), idx.map((i) => cosignatureLine(text, ws[i]!, 1_700_000_000)));

describe('parseWitnessPolicy (Sigsum policy format)', () => {
  const policy = `# two of three, plus the log
log ${hex(log.key)}
witness w1.example ${hex(ws[0]!)} http://127.0.0.1:1
witness w2.example ${hex(ws[1]!)}
witness w3.example ${hex(ws[2]!)}   # trailing comment
group two-of-three 2 w1.example w2.example w3.example
quorum two-of-three
`;

  it('reads witnesses, urls, groups and the quorum', () => {
    const r = parseWitnessPolicy(policy);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.policy.witnesses.map((w) => [w.name, w.url ?? null])).toEqual([['w1.example', 'http://127.0.0.1:1'], ['w2.example', null], ['w3.example', null]]);
    expect(r.policy.witnesses[0]!.verifier.verifierKey).toBe(ws[0]!.verifierKey);
    expect(r.policy.quorum).toMatchObject({ kind: 'group', threshold: 2 });
  });

  it.each([
    ['no quorum', `witness a ${hex(ws[0]!)}\n`, 0],
    ['unknown directive', 'witnesses a b\nquorum none\n', 1],
    ['short key', `witness a ${hex(ws[0]!).slice(2)}\nquorum a\n`, 1],
    ['upper-case hex', `witness a ${hex(ws[0]!).toUpperCase()}\nquorum a\n`, 1],
    ['name with +', `witness a+b ${hex(ws[0]!)}\nquorum none\n`, 1],
    ['duplicate name', `witness a ${hex(ws[0]!)}\nwitness a ${hex(ws[1]!)}\nquorum a\n`, 2],
    ['member used before defined', `group g any a\nwitness a ${hex(ws[0]!)}\nquorum g\n`, 1],
    ['threshold above members', `witness a ${hex(ws[0]!)}\ngroup g 2 a\nquorum g\n`, 2],
    ['threshold 0', `witness a ${hex(ws[0]!)}\ngroup g 0 a\nquorum g\n`, 2],
    ['two quorums', `witness a ${hex(ws[0]!)}\nquorum a\nquorum a\n`, 3],
    ['member twice', `witness a ${hex(ws[0]!)}\ngroup g any a a\nquorum g\n`, 2],
  ])('refuses %s (line %s)', (_what, text, line) => {
    expect(parseWitnessPolicy(text)).toMatchObject({ ok: false, code: 'malformed-policy', line });
  });

  it('--witness/--quorum builds k of n, refusing bad keys and k out of range', () => {
    expect(quorumPolicy(ws.map((w) => w.verifierKey), 2)).toMatchObject({ ok: true, policy: { quorum: { threshold: 2 } } });
    expect(quorumPolicy(ws.map((w) => w.verifierKey), 4)).toMatchObject({ ok: false });
    expect(quorumPolicy([log.key.verifierKey])).toMatchObject({ ok: false });
    expect(quorumPolicy([])).toMatchObject({ ok: false });
  });
});

describe('checkWitnessPolicy', () => {
  const two = quorumPolicy(ws.map((w) => w.verifierKey), 2);
  if (!two.ok) throw new Error(two.message);

  it('accepts a quorum and names who cosigned and who did not', () => {
    expect(checkWitnessPolicy(cosigned(0, 2), [log.key], two.policy)).toMatchObject({ ok: true, signed: ['w1.example', 'w3.example'], missing: ['w2.example'] });
  });

  it('refuses below quorum, naming the witnesses on each side', () => {
    const r = checkWitnessPolicy(cosigned(1), [log.key], two.policy);
    expect(r).toMatchObject({ ok: false, code: 'below-quorum', signed: ['w2.example'], missing: ['w1.example', 'w3.example'] });
    if (!r.ok) expect(r.message).toBe('witness quorum not met: cosigned by w2.example; not cosigned by w1.example, w3.example');
    expect(checkWitnessPolicy(log.checkpoint(), [log.key], two.policy)).toMatchObject({ ok: false, code: 'below-quorum', signed: [] });
  });

  it('a cosignature moved from another checkpoint is a bad signature, not a vote', () => {
    const other = testLog('tally.example/acme', 'ab'.repeat(32), log.key);
    other.append(6);
    const line = cosignatureLine(other.checkpoint().slice(0, other.checkpoint().indexOf('\n\n') + 1), ws[0]!, 1);
    const note = addSignatureLines(cosigned(1), [line]);
    expect(checkWitnessPolicy(note, [log.key], two.policy)).toMatchObject({ ok: false, code: 'bad-signature' });
  });

  it('nested groups: (w1 and w2) or w3; log lines pin the engine key', () => {
    const text = `log ${hex(log.key)}\nwitness w1.example ${hex(ws[0]!)}\nwitness w2.example ${hex(ws[1]!)}\nwitness w3.example ${hex(ws[2]!)}\ngroup both all w1.example w2.example\ngroup either any both w3.example\nquorum either\n`;
    const p = parseWitnessPolicy(text);
    if (!p.ok) throw new Error(p.message);
    expect(checkWitnessPolicy(cosigned(0, 1), [log.key], p.policy).ok).toBe(true);
    expect(checkWitnessPolicy(cosigned(2), [log.key], p.policy).ok).toBe(true);
    expect(checkWitnessPolicy(cosigned(0), [log.key], p.policy)).toMatchObject({ ok: false, code: 'below-quorum' });
    const otherLog = generateEngineKey('tally.example/acme');
    const q = parseWitnessPolicy(text.replace(hex(log.key), hex(otherLog)));
    if (!q.ok) throw new Error(q.message);
    expect(checkWitnessPolicy(cosigned(0, 1), [log.key], q.policy)).toMatchObject({ ok: false, code: 'log-key-not-in-policy' });
  });
});
