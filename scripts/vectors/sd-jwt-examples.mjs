// docs/vectors/sd-jwt-examples.json (PROTOCOL.md §16.12): the SD-JWTs the public specs publish —
// RFC 9901's examples (signed with its Appendix A.5 key) and AP2's documented open and closed
// mandates (issuer key not published; the closed mandates signed by the agent key the open
// mandate's cnf names) — copied verbatim from the texts in scripts/vectors/spec-examples/
// (their sources and licences are in those files and in docs/vectors/README.md), with what
// Tally's verifier must answer for each and negatives made by mutation from each signed one.
// The expectations are stated here, by the author; tests/mandates/spec-examples.test.ts checks
// them against Tally's verifier and the independent RFC 9901 verifier. Built with node:crypto
// only (no Tally code), deterministic (no clock, no RNG).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

const load = (f) => JSON.parse(readFileSync(new URL(`./spec-examples/${f}`, import.meta.url), 'utf8'));
const b64sha = (s) => createHash('sha256').update(s, 'ascii').digest('base64url');
const unb64 = (s) => Buffer.from(s, 'base64url').toString('utf8');
const b64 = (s) => Buffer.from(s, 'utf8').toString('base64url');

/** The part of a presentation up to and including its last `~` (RFC 9901 §4.3.1: what sd_hash covers). */
const sdPart = (compact) => compact.slice(0, compact.lastIndexOf('~') + 1);
const headerOf = (compact) => JSON.parse(unb64(compact.split('.')[0]));
/** One base64url character swapped for another that keeps the text canonical (not the last of a segment). */
const flipAt = (s, i) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);

export function sdJwtExampleVectors() {
  const rfc = load('rfc9901.json');
  const ap2 = load('ap2-docs.json');
  for (const d of rfc.disclosures) if (b64sha(d.disclosure) !== d.digest) throw new Error(`RFC 9901 ${d.section} ${d.label}: the published digest is not SHA-256 of the disclosure`);

  // The agent key of AP2's examples: the cnf of the open payment mandate's disclosure, as the encoded token carries it.
  const openPay = ap2.examples.find((e) => e.name === 'ap2-open-payment-mandate');
  const openDisclosed = openPay.compact.split('~').slice(1, -1).map((d) => JSON.parse(unb64(d)));
  const agentJwk = openDisclosed.map((a) => a[a.length - 1]).find((v) => v && typeof v === 'object' && v.cnf)?.cnf.jwk;
  if (!agentJwk) throw new Error('no cnf in the AP2 open payment mandate');
  const keys = {
    'rfc9901-issuer': { source: 'rfc9901', where: rfc.keys.issuer.where, public: rfc.keys.issuer.jwk },
    'rfc9901-holder': { source: 'rfc9901', where: rfc.keys.holder.where, public: rfc.keys.holder.jwk },
    'ap2-agent': { source: 'ap2', where: 'docs/ap2/payment_mandate.md and checkout_mandate.md: the cnf.jwk of the open mandates\' disclosures (the encoded tokens; the JSON renderings beside them differ in some characters)', public: { kty: agentJwk.kty, crv: agentJwk.crv, x: agentJwk.x, y: agentJwk.y } },
  };

  const sources = [
    { id: 'rfc9901', ...rfc.source },
    { id: 'ap2', ...ap2.source, paths: [...new Set(ap2.examples.map((e) => e.path))] },
  ];

  // Every disclosure the RFC lists with its digest, and every disclosure of AP2's encoded tokens.
  const disclosures = [
    ...rfc.disclosures.map((d) => ({ source: 'rfc9901', where: `§${d.section} ${d.label}`, disclosure: d.disclosure, digest: d.digest, contents: JSON.parse(unb64(d.disclosure)) })),
    ...ap2.examples.flatMap((e) => e.compact.split('~').slice(1, -1).map((d) => ({ source: 'ap2', where: `${e.path}: ${e.where}`, disclosure: d, digest: b64sha(d), contents: JSON.parse(unb64(d)) }))),
  ];
  // What AP2's JSON renderings list as the disclosures' digests, against the digests of the encoded tokens' disclosures.
  const listedDigests = ap2.examples.flatMap((e) => {
    const own = new Set(e.compact.split('~').slice(1, -1).map(b64sha));
    return e.listedDigests.map((listed) => ({ source: 'ap2', example: e.name, listed, isADisclosureDigest: own.has(listed) }));
  });

  const kbPayloadOf = (compact) => { const kb = compact.slice(compact.lastIndexOf('~') + 1); return kb === '' ? undefined : JSON.parse(unb64(kb.split('.')[1])); };
  const examples = [];
  for (const e of rfc.examples) {
    const h = headerOf(e.compact);
    const kb = kbPayloadOf(e.compact);
    examples.push({
      name: e.name, source: 'rfc9901', where: e.where, compact: e.compact, issuer: 'rfc9901-issuer', ...(kb ? { holder: 'rfc9901-holder' } : {}),
      // As an AP2 open mandate: the RFC's `typ` example+sd-jwt is not AP2's (§16.2 step 2); the SD-JWT VC of A.3 passes the header, signature and disclosures and is not a mandate.
      ap2: h.typ === 'dc+sd-jwt' ? 'mandate-vct' : 'sdjwt-header',
      // Under a header rule of the example's own typ (kid optional): every RFC example verifies — signature, strict JSON, exact numbers, digests.
      typed: { typ: h.typ, kid: 'optional', expect: 'ok' },
      ...(kb ? { kb: { expect: 'ok', sdHash: b64sha(sdPart(e.compact)) } } : {}),
      ...(rfc.processed.of === e.name ? { claims: rfc.processed.value } : {}),
    });
    if (kb && kb.sd_hash !== b64sha(sdPart(e.compact))) throw new Error(`${e.name}: the KB-JWT's sd_hash is not SHA-256 of the presentation`);
  }
  for (const e of ap2.examples) {
    const h = headerOf(e.compact);
    const closed = h.typ === 'kb+sd-jwt';
    const payload = JSON.parse(unb64(e.compact.split('.')[1]));
    const open = closed ? ap2.examples.find((o) => !o.name.includes('closed') && b64sha(o.compact) === payload.sd_hash) : undefined;
    if (closed && !open) throw new Error(`${e.name}: sd_hash names no open mandate of the docs`);
    examples.push({
      name: e.name, source: 'ap2', where: `${e.path}: ${e.where}`, compact: e.compact, issuer: closed ? 'ap2-agent' : null,
      ap2: 'sdjwt-header',
      // The open mandates' signer (kid agent-provider-key-1) is not published: no key makes them verify. The closed mandates verify under the open mandate's cnf key.
      typed: { typ: h.typ, kid: closed ? 'optional' : 'required', expect: closed ? 'ok' : 'sdjwt-signature' },
      ...(closed ? { sdHashOf: open.name } : {}),
    });
  }

  // ---- negatives by mutation, from each signed example (under its typed rule; RFC names the aspect the independent verifier must see fail)
  const mutations = [];
  const addM = (of, name, compact, expect, rfcFails, kb) => mutations.push({ name: `${of.name}/${name}`, of: of.name, compact, expect, ...(rfcFails ? { rfcFails } : {}), ...(kb ? { kb } : {}) });
  for (const of of examples.filter((x) => x.typed.expect === 'ok')) {
    const parts = of.compact.split('~');
    const [jwt, ...rest] = parts;
    const kbPart = rest[rest.length - 1];
    const ds = rest.slice(0, -1);
    const [h, p, s] = jwt.split('.');
    const join = (j, d) => [j, ...d, kbPart].join('~');
    addM(of, 'signature-flipped', join(`${h}.${p}.${flipAt(s, 10)}`, ds), 'sdjwt-signature', 'signature');
    addM(of, 'payload-edited', join(`${h}.${flipAt(p, 20)}.${s}`, ds), 'sdjwt-signature', 'signature');
    addM(of, 'padded', join(`${jwt}=`, ds), 'sdjwt-encoding');
    if (ds.length > 0) {
      const first = JSON.parse(unb64(ds[0]));
      const forged = b64(JSON.stringify(['tally-forged-salt-0', ...first.slice(1)]));
      addM(of, 'disclosure-forged-salt', join(jwt, [forged, ...ds.slice(1)]), 'sdjwt-disclosure-digest', 'disclosuresReferenced');
      addM(of, 'disclosure-twice', join(jwt, [ds[0], ...ds]), 'sdjwt-duplicate-digest');
      // A disclosure's value changed and re-encoded: its digest is in no _sd.
      const last = JSON.parse(unb64(ds[ds.length - 1]));
      const edited = b64(JSON.stringify([...last.slice(0, -1), typeof last[last.length - 1] === 'string' ? `${last[last.length - 1]}!` : 'edited']));
      addM(of, 'disclosure-value-edited', join(jwt, [...ds.slice(0, -1), edited]), 'sdjwt-disclosure-digest', 'disclosuresReferenced');
    }
    // The signature in standard base64 (+ / =): the same bytes to a lenient decoder, refused by Tally's one-encoding rule (§16.2 step 1).
    if (/[-_]/.test(s)) addM(of, 'signature-standard-base64', join(`${h}.${p}.${Buffer.from(s, 'base64url').toString('base64')}`, ds), 'sdjwt-encoding');
    if (of.kb) {
      // The KB-JWT kept while a disclosure is dropped: the SD-JWT part still verifies, its sd_hash no longer matches.
      // (A disclosure that carries no digest of another released one: dropping it leaves every other referenced.)
      const leafAt = ds.findIndex((d) => !ds.some((o) => o !== d && unb64(d).includes(b64sha(o))));
      addM(of, 'kb-after-dropping-a-disclosure', join(jwt, ds.filter((_, i) => i !== leafAt)), 'ok', 'sdHash', { expect: 'kb-sd-hash' });
      const [kh, kp, ks] = kbPart.split('.');
      addM(of, 'kb-signature-flipped', [jwt, ...ds, `${kh}.${kp}.${flipAt(ks, 10)}`].join('~'), 'ok', 'kbSignature', { expect: 'kb-signature' });
    }
  }

  return {
    description: 'SD-JWTs published by the specs themselves (PROTOCOL.md §16.12), verbatim: RFC 9901\'s examples and AP2\'s documented mandates; sources names each text (repository, commit, path, licence). keys: the published public keys. disclosures: each published disclosure and its digest (the RFC\'s as printed; AP2\'s from its encoded tokens) — SHA-256 of the disclosure text, base64url. listedDigests: the digests AP2\'s JSON renderings list, and whether each is a digest of one of the token\'s disclosures. examples: ap2 is what verifyOpenMandate answers under the issuer key (ok or the refusal code); typed the answer of verifySdJwt on the SD-JWT part (up to the last ~) with header rule {typ, kid}, under the issuer key, or under every key of keys when issuer is null (no key is published); kb, for an SD-JWT+KB, the KB-JWT checked under the holder key with sdHash its expected sd_hash; sdHashOf, the example whose SHA-256 is the payload\'s sd_hash; claims, the processed payload the spec publishes. mutations: made from one example; expect is the typed answer, rfcFails the aspect the independent RFC 9901 verifier must find false, kb the KB-JWT answer.',
    sources, keys, disclosures, listedDigests, examples, mutations,
  };
}
