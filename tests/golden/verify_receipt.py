#!/usr/bin/env python3
"""A Tally receipt verifier in another language, written from docs/PROTOCOL.md
(sections 6, 11.1-11.4, 12.1 and 14) with Python's standard library only: signed
notes, session checkpoints and single-turn receipts (C2SP signed-note,
tlog-checkpoint, tlog-proof). Ed25519 verification is RFC 8032 section 6's.

Usage: python3 verify_receipt.py --corpus docs/vectors/receipts.json
Prints {"checkpoints": [...], "turnReceipts": [...]}: one result per case, in order.
       python3 verify_receipt.py --cosignatures docs/vectors/cosignatures.json
Prints one result per case: the cosigners that verified (section 12.1), or the refusal code.
       python3 verify_receipt.py <receipt.tlog-proof> <verifier key>...
Prints one JSON line: {"ok": true, "index", "sessionId", "size"} or {"ok": false, "stage", "code"}.
"""
import base64, binascii, hashlib, json, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verify_bundle import H, authored_code, frame_root, read_line  # noqa: E402

# ---- Ed25519 verification (RFC 8032 section 6, the reference code)
P = 2**255 - 19
Q = 2**252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, P - 2, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)

def _add(a, b):
    A, B = (a[1] - a[0]) * (b[1] - b[0]) % P, (a[1] + a[0]) * (b[1] + b[0]) % P
    C, Dd = 2 * a[3] * b[3] * D % P, 2 * a[2] * b[2] % P
    E, F, G, Hh = B - A, Dd - C, Dd + C, B + A
    return (E * F % P, G * Hh % P, F * G % P, E * Hh % P)

def _mul(s, pt):
    acc = (0, 1, 1, 0)
    while s > 0:
        if s & 1: acc = _add(acc, pt)
        pt, s = _add(pt, pt), s >> 1
    return acc

def _x(y, sign):
    if y >= P: return None
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P)
    if x2 == 0: return None if sign else 0
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P: x = x * SQRT_M1 % P
    if (x * x - x2) % P: return None
    return P - x if (x & 1) != sign else x

def _point(s):
    y = int.from_bytes(s, 'little')
    x = _x(y & ((1 << 255) - 1), y >> 255)
    return None if x is None else (x, y & ((1 << 255) - 1), 1, x * (y & ((1 << 255) - 1)) % P)

_GY = 4 * pow(5, P - 2, P) % P
G = (_x(_GY, 0), _GY, 1, _x(_GY, 0) * _GY % P)

def ed25519_verify(public, msg, sig):
    if len(public) != 32 or len(sig) != 64: return False
    A, R = _point(public), _point(sig[:32])
    s = int.from_bytes(sig[32:], 'little')
    if A is None or R is None or s >= Q: return False
    h = int.from_bytes(hashlib.sha512(sig[:32] + public + msg).digest(), 'little') % Q
    left, right = _mul(s, G), _add(R, _mul(h, A))
    return (left[0] * right[2] - right[0] * left[2]) % P == 0 and (left[1] * right[2] - right[1] * left[2]) % P == 0

# ---- Section 11.1-11.2: keys and signed notes
DECIMAL = re.compile(r'^(0|[1-9][0-9]*)$')
CONTROL_NOTE = re.compile('[\x00-\x09\x0b-\x1f]')
CONTROL_LINE = re.compile('[\x00-\x1f]')

def b64strict(s):
    """Canonical standard base64 (padded), else None."""
    try: raw = base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError): return None
    return raw if base64.b64encode(raw).decode() == s else None

def key_name_ok(name):
    return name != '' and '+' not in name and not any(ch.isspace() for ch in name)

def parse_vkey(vkey):
    """<name>+<hex8 key ID>+<base64(type || pubkey32)>; the key ID is SHA-256(name || 0x0A || type || pubkey)[0:4].
    Type 0x01: an engine key (section 11.1); 0x04: a witness cosigner key (section 12.1)."""
    name, kid, b64 = vkey.split('+', 2)
    raw = b64strict(b64)
    if not key_name_ok(name) or raw is None or len(raw) != 33 or raw[0] not in (1, 4): raise ValueError('malformed verifier key')
    if H(name.encode('utf-8'), b'\n', raw).hex()[:8] != kid: raise ValueError('key ID mismatch')
    return (name, kid), (raw[0], raw[1:])

def signature_ok(key, text, sig):
    """An engine signature over the text, or a cosignature: u64 time T (at most 2^53 - 1) then the
    signature over "cosignature/v1\ntime T\n" || text (section 12.1). Returns the time, True, or False."""
    kind, pub = key
    if kind == 1: return ed25519_verify(pub, text, sig)
    if len(sig) != 72: return False
    t = int.from_bytes(sig[:8], 'big')
    if t > 2**53 - 1: return False
    return t if ed25519_verify(pub, b'cosignature/v1\ntime %d\n' % t + text, sig[8:]) else False

def open_note(note, pinned):
    """Section 11.2: ('code', None) or (None, (text, verified names))."""
    if any(0xD800 <= ord(c) <= 0xDFFF for c in note) or CONTROL_NOTE.search(note): return 'malformed-note', None
    split = note.rfind('\n\n')
    if split < 0 or split + 2 >= len(note) or not note.endswith('\n'): return 'malformed-note', None
    text, verified, seen, count = note[:split + 1], [], set(), 0
    for line in note[split + 2:-1].split('\n'):
        if not line.startswith('\u2014 '): return 'malformed-note', None
        name, _, b64 = line[2:].partition(' ')
        raw = b64strict(b64)
        if raw is None or b64 == '' or not key_name_ok(name) or len(raw) < 5: return 'malformed-note', None
        count += 1
        if count > 100: return 'too-many-signatures', None
        kid = raw[:4].hex()
        if (name, kid) not in pinned or (name, kid) in seen: continue  # unknown: ignored; later lines of a pinned key: skipped
        seen.add((name, kid))
        ok = signature_ok(pinned[(name, kid)], text.encode('utf-8'), raw[4:])
        if ok is False: return 'bad-signature', None
        verified.append((name, ok))
    if not verified: return 'no-pinned-signature', None
    return None, (text, verified)

def open_cosigned(note, pinned):
    """Section 12.1: the cosigners whose cosignature verified, in line order, with their time."""
    code, opened = open_note(note, pinned)
    if code: return {'ok': False, 'code': code}
    return {'ok': True, 'cosigners': [{'name': n, 'time': t} for n, t in opened[1] if t is not True]}

def open_checkpoint(note, pinned):
    """Sections 11.2-11.3: (stage, code) or (None, checkpoint)."""
    code, opened = open_note(note, pinned)
    if code: return ('note', code), None
    text, verified = opened
    lines = text[:-1].split('\n')
    if len(lines) < 3 or any(CONTROL_LINE.search(l) for l in lines): return ('checkpoint', 'malformed-checkpoint'), None
    origin, size, root = lines[0], lines[1], b64strict(lines[2])
    if origin == '' or origin != origin.strip(): return ('checkpoint', 'bad-origin'), None
    if not DECIMAL.match(size): return ('checkpoint', 'bad-size'), None
    if int(size) > 2**53 - 1: return ('checkpoint', 'size-out-of-range'), None
    if root is None or len(root) != 32: return ('checkpoint', 'bad-root-hash'), None
    if any(l == '' for l in lines[3:]): return ('checkpoint', 'bad-extension'), None
    slash = origin.rfind('/')  # the origin splits at its LAST "/": engine names may contain "/"
    engine, sid = origin[:slash], origin[slash + 1:]
    if slash <= 0 or not re.match(r'^[0-9a-f]{64}$', sid): return ('origin', 'not-a-session-origin'), None
    if engine not in [n for n, t in verified if t is True]: return ('origin', 'origin-not-signer'), None
    return None, {'ok': True, 'engineName': engine, 'sessionId': sid, 'size': int(size), 'root': root.hex()}

# ---- Section 11.4: single-turn receipts (C2SP tlog-proof with the entry as "extra")
def parse_proof(text):
    lines, pos = [], 0
    def nxt():
        nonlocal pos
        nl = text.find('\n', pos)
        if nl < 0: return None
        line, pos = text[pos:nl], nl + 1
        return line
    if nxt() != 'c2sp.org/tlog-proof@v1': return 'bad-header', None
    line, extra = nxt(), None
    if line is not None and line.startswith('extra '):
        extra = b64strict(line[6:])
        if extra is None: return 'bad-extra', None
        line = nxt()
    if line is None or not line.startswith('index '): return 'bad-index', None
    if not DECIMAL.match(line[6:]): return 'bad-index', None
    index = int(line[6:])
    if index > 2**53 - 1: return 'index-out-of-range', None
    while True:
        line = nxt()
        if line is None: return 'missing-checkpoint', None
        if line == '': break
        h = b64strict(line)
        if h is None or len(h) != 32: return 'bad-proof-hash', None
        if len(lines) == 64: return 'proof-too-long', None
        lines.append(h)
    cp = text[pos:]
    if cp == '' or not cp.endswith('\n') or cp.startswith('\n'): return 'missing-checkpoint', None
    return None, (extra, index, lines, cp)

def inclusion_root(index, size, leaf, proof):
    """RFC 9162 section 2.1.3.2: the root the proof gives, or an error code."""
    if index >= size: return 'index-out-of-range'
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0: return 'wrong-proof-size'
        if fn & 1 or fn == sn:
            r = H(b'\x01', p, r)
            if not fn & 1:
                while (fn & 1) == 0 and fn != 0: fn, sn = fn >> 1, sn >> 1
        else:
            r = H(b'\x01', r, p)
        fn, sn = fn >> 1, sn >> 1
    return 'wrong-proof-size' if sn != 0 else r

def verify_receipt(text, pinned):
    code, parsed = parse_proof(text)
    if code: return {'ok': False, 'stage': 'proof', 'code': code}
    extra, index, proof, cp_text = parsed
    if not extra: return {'ok': False, 'stage': 'proof', 'code': 'missing-entry'}
    where, cp = open_checkpoint(cp_text, pinned)
    if where: return {'ok': False, 'stage': where[0], 'code': where[1]}
    if len(extra) > 1048576: return {'ok': False, 'stage': 'entry', 'code': 'too-large'}
    code, e = read_line(extra)
    if not code and e['kind'] == 'frame' and frame_root(e) != e['frameRoot']: code = 'bad-frame-root'
    if not code and e['kind'] == 'turn' and e['body']['kind'] == 'authored': code = authored_code(e['body'])
    if code: return {'ok': False, 'stage': 'entry', 'code': code}
    leaf = H(b'\x00', extra)
    if e['kind'] == 'genesis':
        if index != 0: return {'ok': False, 'stage': 'entry', 'code': 'wrong-position'}
        if leaf.hex() != cp['sessionId']: return {'ok': False, 'stage': 'entry', 'code': 'wrong-session'}
    else:
        if index == 0: return {'ok': False, 'stage': 'entry', 'code': 'wrong-position'}
        if e['session'] != cp['sessionId']: return {'ok': False, 'stage': 'entry', 'code': 'wrong-session'}
        if e['kind'] == 'finalize' and e['size'] != index: return {'ok': False, 'stage': 'entry', 'code': 'wrong-position'}
    r = inclusion_root(index, cp['size'], leaf, proof)
    if isinstance(r, str): return {'ok': False, 'stage': 'inclusion', 'code': r}
    if r.hex() != cp['root']: return {'ok': False, 'stage': 'inclusion', 'code': 'root-mismatch'}
    return {'ok': True, 'index': index, 'sessionId': cp['sessionId'], 'size': cp['size']}

def pinned_keys(vkeys):
    return dict(parse_vkey(k) for k in vkeys)

def corpus(path):
    with open(path, 'r', encoding='utf-8') as fh: v = json.load(fh)
    pinned = pinned_keys(v['verifierKeys'])
    cps = []
    for c in v['checkpoints']:
        where, cp = open_checkpoint(c['note'], pinned)
        cps.append({'ok': False, 'code': where[1]} if where else cp)
    return {'checkpoints': cps, 'turnReceipts': [verify_receipt(c['text'], pinned) for c in v['turnReceipts']]}

def cosignatures(path):
    with open(path, 'r', encoding='utf-8') as fh: v = json.load(fh)
    pinned = pinned_keys([v['engineKey']] + v['cosignerKeys'])
    return [open_cosigned(c['note'], pinned) for c in v['cases']]

if __name__ == '__main__' and sys.argv[1:2] == ['--cosignatures']:
    print(json.dumps(cosignatures(sys.argv[2])))
    sys.exit(0)

if __name__ == '__main__' and sys.argv[1:2] == ['--corpus']:
    print(json.dumps(corpus(sys.argv[2])))
    sys.exit(0)

if __name__ == '__main__':
    with open(sys.argv[1], 'r', encoding='utf-8') as fh:
        result = verify_receipt(fh.read(), pinned_keys(sys.argv[2:]))
    print(json.dumps(result))
    sys.exit(0 if result['ok'] else 1)
